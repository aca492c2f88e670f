"""QEMU for pmutest: the one command-line builder, the one UEFI firmware
table, the one KVM probe, and the loop that runs QEMU while following its
serial log. tools/pmutest-run, tools/boot-matrix.py and python3 -m pmutest.bench all
start QEMU through here."""
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass

from . import REPO_ROOT
from .ktap import clean_line, end_marker_seen
from .verdict import END_GRACE_SECONDS, RunResult

QEMU = 'qemu-system-x86_64'
QEMU_PACKAGE = 'qemu-system-x86'
DEBUG_EXIT = 'isa-debug-exit,iobase=0xf4,iosize=0x04'

# UEFI firmware, in order of preference: a unified image as -bios, else a
# CODE/VARS pair (two pflash drives, VARS copied so a run never writes the
# system file). Under -bios the firmware is read-only and OVMF keeps its
# variables in RAM: every boot starts from the same state, and none writes
# its variable store through QEMU's emulated pflash as a fresh VARS copy
# has it do (QEMU spends about 0.3 s less CPU time per OVMF boot under
# TCG, README.md "Boot time"). Debian 12 ships both; newer releases only
# the 4M pair.
OVMF_UNIFIED = ('/usr/share/ovmf/OVMF.fd', '/usr/share/qemu/OVMF.fd')
OVMF_PAIRS = (('/usr/share/OVMF/OVMF_CODE.fd', '/usr/share/OVMF/OVMF_VARS.fd'),
              ('/usr/share/OVMF/OVMF_CODE_4M.fd', '/usr/share/OVMF/OVMF_VARS_4M.fd'))

KVM_MSR_ERROR = 'failed to set MSR'
KVM_MSR_WORKAROUND = ',-arch-capabilities'
KVM_PROBE_TIMEOUT = 20


def find_ovmf(exists=os.path.isfile):
    """The UEFI firmware to use, or None: {'bios'} or {'code','vars'}."""
    for path in OVMF_UNIFIED:
        if exists(path):
            return {'bios': path}
    for code, nvram in OVMF_PAIRS:
        if exists(code) and exists(nvram):
            return {'code': code, 'vars': nvram}
    return None


def private_ovmf(ovmf, workdir):
    """The firmware with a private copy of its variable store: OVMF writes
    its boot order there, and one run's NVRAM must not steer the next."""
    if ovmf is None or 'vars' not in ovmf:
        return ovmf
    copy = os.path.join(workdir, os.path.basename(ovmf['vars']))
    with open(ovmf['vars'], 'rb') as src, open(copy, 'wb') as dst:
        dst.write(src.read())
    return {'code': ovmf['code'], 'vars': copy}


@dataclass
class QemuConfig:
    qemu: str = QEMU
    kernel: str = None
    append: str = None
    iso: str = None
    boot: str = 'cd'              # cd | usb (with iso)
    firmware: str = 'bios'        # bios | uefi
    ovmf: dict = None             # {'code': ..., 'vars': ...} or {'bios': ...}
    machine: str = 'q35'
    smp: int = 4
    memory: str = '512M'
    accel: str = 'tcg'            # kvm | tcg (already resolved)
    cpu: str = None               # None: host under KVM, max under TCG
    cpu_suffix: str = ''          # e.g. ',-arch-capabilities'
    serial_log: str = 'serial.log'
    debug_exit: bool = True       # isa-debug-exit, so the kernel's code becomes QEMU's status
    extra: tuple = ()

    def cpu_model(self):
        return (self.cpu or ('host' if self.accel == 'kvm' else 'max')) + self.cpu_suffix


def _drive_file(path):
    # -drive is a comma-separated option list; QEMU escapes a comma by doubling it.
    return path.replace(',', ',,')


def accel_args(accel, cpu_model):
    return ['-accel', 'kvm' if accel == 'kvm' else 'tcg,thread=multi', '-cpu', cpu_model]


def build_qemu_command(cfg):
    """The full QEMU argv for one run; pure, so the tests can check it."""
    cmd = [cfg.qemu, '-nodefaults', '-no-reboot', '-display', 'none',
           '-machine', cfg.machine, '-m', cfg.memory, '-smp', str(cfg.smp)]
    cmd += accel_args(cfg.accel, cfg.cpu_model())
    if cfg.firmware == 'uefi':
        ovmf = cfg.ovmf or {}
        if 'bios' in ovmf:
            cmd += ['-bios', ovmf['bios']]
        else:
            cmd += ['-drive', 'if=pflash,format=raw,unit=0,readonly=on,file=' + _drive_file(ovmf['code']),
                    '-drive', 'if=pflash,format=raw,unit=1,file=' + _drive_file(ovmf['vars'])]
    if cfg.kernel:
        cmd += ['-kernel', cfg.kernel]
        if cfg.append is not None:
            cmd += ['-append', cfg.append]
    elif cfg.boot == 'usb':
        cmd += ['-device', 'qemu-xhci',
                '-drive', 'if=none,id=stick,format=raw,file=%s,snapshot=on' % _drive_file(cfg.iso),
                '-device', 'usb-storage,drive=stick']
    else:
        cmd += ['-cdrom', cfg.iso]
    cmd += ['-serial', 'file:' + cfg.serial_log]
    if cfg.debug_exit:
        cmd += ['-device', DEBUG_EXIT]
    return cmd + list(cfg.extra)


# ---------------------------------------------------------------- running

class _Echo:
    """Copies serial output to the terminal whole lines at a time, cleaned,
    so firmware escape sequences cannot repaint the user's terminal."""

    def __init__(self, enabled):
        self.enabled, self.partial = enabled, ''

    def feed(self, text):
        if not self.enabled:
            return
        lines = (self.partial + text).split('\n')
        self.partial = lines.pop()
        for line in lines:
            print(clean_line(line), flush=True)

    def flush(self):
        if self.enabled and self.partial:
            print(clean_line(self.partial), flush=True)
        self.partial = ''


# A run still printing at its timeout is given more time, up to this many
# timeouts in all: on a busy host the guest is slow, not stuck.
TIMEOUT_STRETCH_MAX = 10


def _cpu_seconds(pid):
    """User + system CPU seconds the process has had, or None."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    except (OSError, ValueError, IndexError):
        return None


def host_note(pid, elapsed):
    """How busy the host was, for a timeout's message: the load average
    against the CPUs, and the share of the run QEMU was given."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return ''
    ncpu = os.cpu_count() or 1
    cpu = _cpu_seconds(pid)
    had = ', QEMU had %.0f s of CPU in %.0f s' % (cpu, elapsed) if cpu is not None else ''
    if load > ncpu:
        return 'the host was busy: load average %.1f on %d CPUs%s' % (load, ncpu, had)
    return 'the host was not busy: load average %.1f on %d CPUs%s' % (load, ncpu, had)


def run_qemu(cmd, log_path, timeout, echo=False, stop_when=None):
    """Run QEMU, following the serial log file as QEMU writes it, until it
    exits, timeout seconds pass, or stop_when(text so far, seconds) is true.
    At the timeout a run whose log grew within the last quarter of it (at
    least 5 s) is still making progress, only slowly (a busy host, TCG): it
    goes on, up to TIMEOUT_STRETCH_MAX timeouts in all. A timeout's result
    says how busy the host was (host_note)."""
    if os.path.exists(log_path):
        os.unlink(log_path)          # never mistake an old log for this run's
    result, printer, text = RunResult(), _Echo(echo), ''
    start = last_output = time.monotonic()
    quiet_limit = max(5.0, timeout / 4.0)
    with tempfile.TemporaryFile(mode='w+', errors='replace') as errf:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=errf, stderr=errf)
        logf = None
        try:
            while True:
                exited = proc.poll() is not None
                if logf is None and os.path.exists(log_path):
                    logf = open(log_path, 'rb')
                if logf is not None:
                    chunk = logf.read().decode('utf-8', errors='replace')
                    if chunk:
                        text += chunk
                        printer.feed(chunk)
                        last_output = time.monotonic()
                elapsed = time.monotonic() - start
                if exited:
                    break
                if elapsed > timeout and (time.monotonic() - last_output > quiet_limit
                                          or elapsed > timeout * TIMEOUT_STRETCH_MAX):
                    result.timed_out = True
                    result.host_note = host_note(proc.pid, elapsed)
                    break
                why = stop_when(text, elapsed) if stop_when is not None else None
                if why:
                    result.stopped = True
                    if isinstance(why, str):
                        result.stop_reason = why
                    break
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(3)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if logf is None and os.path.exists(log_path):
                logf = open(log_path, 'rb')
            if logf is not None:
                tail = logf.read().decode('utf-8', errors='replace')
                logf.close()
                text += tail
                printer.feed(tail)
        printer.flush()
        errf.seek(0)
        result.stderr = errf.read()
    result.elapsed = time.monotonic() - start
    if not (result.timed_out or result.stopped):
        result.status = proc.returncode
    return result


def stop_after_end_grace(grace=END_GRACE_SECONDS):
    """stop_when for a real run: the kernel printed its end marker but QEMU
    did not exit (no isa-debug-exit?) within grace seconds."""
    seen = {}

    def stop(text, elapsed):
        if 'seen' not in seen and end_marker_seen(text):
            seen['seen'] = elapsed
        return 'seen' in seen and elapsed - seen['seen'] > grace
    return stop


# ---------------------------------------------------------------- KVM

def _start_paused(qemu, accel, cpu_model, timeout=KVM_PROBE_TIMEOUT):
    """Create a machine with its vCPUs and run nothing (-S), then quit
    through the monitor: status 0 means the accelerator, the CPU model and
    its MSRs were all accepted. Returns (status or None, stderr)."""
    cmd = [qemu, '-nodefaults', '-display', 'none', '-machine', 'q35', '-S', '-monitor', 'stdio']
    cmd += accel_args(accel, cpu_model)
    try:
        proc = subprocess.run(cmd, input='quit\n', stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, errors='replace', timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, 'QEMU did not answer its monitor within %d s' % timeout
    except OSError as e:
        return None, str(e)
    return proc.returncode, proc.stderr


def kvm_unusable_reason(qemu=QEMU, cpu_model='host', dev='/dev/kvm', starter=_start_paused,
                        access=os.access):
    """(reason KVM cannot run here or None, cpu suffix the model needs).
    Asks the device and then QEMU alone (no pmutest image), so a kernel
    that crashes under KVM is that run's failure, not a reason to skip KVM.
    A host whose KVM refuses an MSR QEMU sets for -cpu host (seen with
    arch-capabilities on some hosts) gets ',-arch-capabilities' added."""
    if not os.path.exists(dev):
        return 'no %s' % dev, ''
    if not access(dev, os.R_OK | os.W_OK):
        return '%s is not read/writable by this user' % dev, ''
    suffix = ''
    for _attempt in range(2):
        status, stderr = starter(qemu, 'kvm', cpu_model + suffix)
        if status == 0:
            return None, suffix
        if KVM_MSR_ERROR in stderr and not suffix:
            suffix = KVM_MSR_WORKAROUND
            continue
        break
    lines = [line for line in stderr.splitlines() if line.strip()]
    why = lines[-1] if lines else 'exit %s' % status
    return 'QEMU could not start a KVM guest with -cpu %s: %s' % (cpu_model + suffix, why), ''


def probe_cache_path():
    build = os.path.join(REPO_ROOT, 'build')
    if os.path.isdir(build):
        return os.path.join(build, '.kvm-probe')
    return os.path.join(tempfile.gettempdir(), 'pmutest-kvm-probe.json')


def probe_key(qemu, cpu_model):
    """The cache key: QEMU binary with its mtime, the CPU model, and the
    kvm module's load time (a reloaded module may answer differently)."""
    real = os.path.realpath(qemu)
    try:
        stamp = '%s@%d' % (real, os.stat(real).st_mtime_ns)
    except OSError:
        stamp = real + '@?'
    try:
        module = '%d' % os.stat('/sys/module/kvm').st_mtime_ns
    except OSError:
        module = '?'
    return '%s|%s|kvm@%s' % (stamp, cpu_model, module)


def _load_cache(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_cache(path, cache):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            json.dump(cache, f, indent=1, sort_keys=True)
    except OSError:
        pass                      # a cache, not a result


def choose_accel(requested, cfg, cache_path=None, probe=kvm_unusable_reason):
    """Resolve --accel into (accel, cpu_suffix, note). 'auto' is KVM when
    the probe says KVM can start this CPU model, else TCG; the probe's
    answer is cached per QEMU binary, CPU model and kvm module load."""
    cpu_model = cfg.cpu or 'host'
    if requested == 'tcg':
        return 'tcg', '', 'accel: tcg (requested)'
    cache_path = cache_path or probe_cache_path()
    cache = _load_cache(cache_path)
    key = probe_key(cfg.qemu, cpu_model)
    if key in cache:
        reason, suffix, how = cache[key].get('reason'), cache[key].get('cpu_suffix', ''), 'cached'
    else:
        reason, suffix = probe(cfg.qemu, cpu_model)
        how = 'probed'
        cache[key] = {'reason': reason, 'cpu_suffix': suffix}
        _save_cache(cache_path, cache)
    extra = ' with -cpu %s%s' % (cpu_model, suffix) if suffix else ''
    if requested == 'kvm':
        return 'kvm', suffix, 'accel: kvm (requested)%s%s' % (
            extra, '; the probe says: ' + reason if reason else '')
    if reason is None:
        return 'kvm', suffix, 'accel: kvm (%s: QEMU starts a KVM guest%s)' % (how, extra)
    return 'tcg', '', 'accel: tcg, because KVM does not work here (%s: %s)' % (how, reason)
