"""What Linux should find on an emulated profile: the PMU shape the emulator
declares for the profile's CPU model (the tables of
emu/model/x86-pmu-config.c, read from the file, so that the two never
drift) with the profile's pmu-* properties applied as emu/qemu/README.md
describes them.

shape(profile) returns a Shape, or raises ShapeError naming a property this
module does not model (the harness then fails the profile rather than guess).
"""
import os
import re
from dataclasses import dataclass

from harness import _paths

CONFIG_C = os.path.join(_paths.ROOT, "emu", "model", "x86-pmu-config.c")
V6_C = os.path.join(_paths.ROOT, "emu", "model", "x86-pmu-v6.c")
OMR_C = os.path.join(_paths.ROOT, "emu", "model", "x86-pmu-omr.c")
ARCH_PEBS_C = os.path.join(_paths.ROOT, "emu", "model", "x86-pmu-arch-pebs.c")

# The named shapes (pmu-shape=), each as the functions that build it: the
# fields the first sets, then those each next one changes.
# Each begins with leaf 0AH as Lunar Lake's dump gives it, which the shape
# functions call first.
LUNARLAKE_0A = (CONFIG_C, "x86pmu_config_lunarlake_0a(X86PMUConfig")
NAMED = {
    "lunarlake-p": (LUNARLAKE_0A, (V6_C, "x86pmu_shape_named(")),
    "lunarlake-e": (LUNARLAKE_0A, (V6_C, "x86pmu_shape_named(")),
    # Lion Cove's counters changed to Diamond Rapids' (x86pmu_dmr_shape).
    "diamondrapids": (LUNARLAKE_0A, (V6_C, "x86pmu_shape_named("),
                      (OMR_C, "x86pmu_dmr_shape(X86PMUConfig")),
    "clearwater-forest": (LUNARLAKE_0A, (ARCH_PEBS_C, "x86pmu_arch_pebs_shape(const char")),
}

# A shape built on another's row of a table (perf_caps from that row).
NAMED_ROW = {"diamondrapids": "lunarlake-p"}

# Linux 6.1's intel_ds_init drives PEBS record formats 0-5; any other
# format (architectural PEBS's 0xF) it prints as "no PEBS fmtN" and leaves
# PEBS off (x86_pmu.pebs = 0, so caps/max_precise reads 0).
LINUX_PEBS_FORMATS = range(0, 6)

# QEMU 7.2's AMD CPU models: family and model (target/i386/cpu.c).
AMD_MODELS = {
    "Opteron_G1": (0x0F, 0x06), "Opteron_G2": (0x0F, 0x06),
    "Opteron_G3": (0x10, 0x02), "Opteron_G4": (0x15, 0x01),
    "Opteron_G5": (0x15, 0x02), "EPYC": (0x17, 0x01), "EPYC-Rome": (0x17, 0x31),
    "EPYC-Milan": (0x19, 0x01),
}

# Properties that change nothing Linux prints at boot (counting conventions,
# the reserved-bit rule, the uncore).
NEUTRAL = {"pmu", "family", "pmu-wrmsr-counted", "pmu-delivery-retires", "pmu-target-mode",
           "pmu-amd-reserved-gp", "pmu-uncore", "pmu-offcore", "pmu-ibpb",
           "pmu-lbr-pmc-freeze", "pmu-ref-ratio", "pmu-slots-per-cycle",
           "pmu-v6-caps"}


class ShapeError(Exception):
    pass


@dataclass
class Shape:
    vendor: str           # "intel" or "amd"
    version: int          # Linux's "... version:" (AMD: 2 with PerfMonV2, else 0)
    gp: int
    width: int
    fixed: int            # fixed counters Linux can use
    pebs: int = None      # PEBS record format, None without PEBS
    lbr: int = None       # LBR depth, None without LBRs
    fw_writes: bool = False
    perfmon_v2: bool = False
    perf_metrics: bool = False  # IA32_PERF_CAPABILITIES[15] (level 1)
    td_level2: bool = False     # PERF_METRICS' level-2 bytes filled


def _intel_tables(text):
    shapes = {}
    block = text[text.index("intel_shapes[] = {"):]
    block = block[:block.index("\n};")]
    entry = re.compile(r'\{\s*"([^"]*)",((?:\s*"(?:[^"\\]|\\.)*")+)\s*,([^}]*)\}', re.S)
    for m in entry.finditer(block):
        f = [x.strip() for x in m.group(3).split(",")]
        rec = {"version": int(f[0]), "gp": int(f[1]), "width": int(f[2]),
               "fixed": int(f[3]), "pdcm": f[6] == "true", "fw": "CAPS_FW" in f[8]}
        for model in m.group(1).split("|"):
            shapes[model] = rec
    lbr_pebs = {}
    block = text[text.index("lbr_pebs_shapes[] = {"):]
    block = block[:block.index("\n};")]
    for m in re.finditer(r'\{\s*"([^"]*)",\s*(X86PMU_LBR_\w+),\s*(\d+),\s*'
                         r'LBR_PEBS_CAPS\((\w+),\s*(\d+),\s*(\w+)\)\s*\}', block):
        for model in m.group(1).split("|"):
            lbr_pebs[model] = (int(m.group(3)), int(m.group(5)))
    if not shapes or not lbr_pebs:
        raise ShapeError(f"{CONFIG_C}: intel_shapes or lbr_pebs_shapes not found")
    return shapes, lbr_pebs


def _perf_metrics_models(text):
    """The family-6 models perf_metrics_shape gives PERF_METRICS: (level 1
    and more, level 2), from its two tables."""
    body = _body(text, "perf_metrics_shape(uint32_t")
    out = []
    for name in ("level1", "level2"):
        block = body[body.index(name + "[] = {"):]
        block = block[:block.index("};")]
        out.append({int(x, 16) for x in re.findall(r"0x([0-9a-f]+)", block)})
    return out[0] | out[1], out[1]


def _body(text, anchor):
    """The body of the C function whose definition starts at anchor."""
    i = text.index(anchor)
    i = text.index("\n{", i)
    return text[i:text.index("\n}\n", i)]


def _named_fields(name):
    """{field: value} the emulator's functions set for a named shape, in
    their order: leaf 0AH's fields, the LBR depth, and from perf_caps the
    full-width-write bit and the PEBS record format (bits 11:8)."""
    if name not in NAMED:
        raise ShapeError(f"pmu-shape={name}: not modelled by harness/pmu_shape.py")
    out = {}
    for path, anchor in NAMED[name]:
        with open(path) as f:
            text = f.read()
        body = _body(text, anchor)
        for field, val in re.findall(r"(?:c|cfg)->(version|num_gp|gp_width|fixed_bitmap|"
                                     r"num_fixed|lbr_depth|perf_caps) = ([^;]+);", body, re.S):
            if field == "perf_caps":
                if "v->perf_caps" in val:   # the shape's row of the table
                    row = text[text.index('{ "%s",' % NAMED_ROW.get(name, name)):]
                    val = row[:row.index("},")]
                out["fw"] = "CAP_FW_WRITE" in val
                # Level 2 with the bit on the named shapes (x86pmu_shape_named).
                out["pm"] = "CAP_PERF_METRICS" in val
                m = re.search(r"0x([0-9a-f])00ull", val)
                out["pebs"] = int(m.group(1), 16) if m else None
            else:
                out[field] = int(val.strip(), 0)
    return out


def _num(v):
    return int(v, 0)


def shape(cpuarg, config_c=CONFIG_C):
    """The Shape of a profile's -cpu argument."""
    model, *props = cpuarg.split(",")
    kv = dict(p.split("=", 1) if "=" in p else (p, "on") for p in props)
    if kv.get("pmu") != "on":
        raise ShapeError(f"{cpuarg}: no pmu=on")
    if model in AMD_MODELS:
        return _amd(model, kv)
    with open(config_c) as f:
        text = f.read()
    shapes, lbr_pebs = _intel_tables(text)
    if model not in shapes:
        raise ShapeError(f"{model}: no Intel shape in {config_c}")
    s = shapes[model]
    out = Shape("intel", s["version"], s["gp"], s["width"], s["fixed"],
                fw_writes=s["fw"])
    # PERF_METRICS by family and model (QEMU 7.2's Icelake-Server without
    # model= is 06_86H, which has none; "family" is not 6 when set).
    pm, pm2 = _perf_metrics_models(text)
    mdl = _num(kv["model"]) if "model" in kv and "family" not in kv else None
    out.perf_metrics, out.td_level2 = mdl in pm, mdl in pm2
    if model in lbr_pebs:
        out.lbr, out.pebs = lbr_pebs[model]
    bitmap = 0
    if "pmu-shape" in kv:
        # A named shape replaces the model's (emu/qemu/README.md, "Shapes"):
        # its counters, architectural LBRs where it gives them a depth,
        # PEBS where its perf_caps has a record format.
        v6 = _named_fields(kv["pmu-shape"])
        out = Shape("intel", v6["version"], v6["num_gp"], v6["gp_width"],
                    v6["num_fixed"], fw_writes=v6.get("fw", False),
                    lbr=v6.get("lbr_depth"), pebs=v6.get("pebs"),
                    perf_metrics=v6.get("pm", False), td_level2=v6.get("pm", False))
        bitmap = v6["fixed_bitmap"]
    for k, v in kv.items():
        if k in NEUTRAL or k in ("model", "pmu-shape"):
            continue
        if k == "pmu-version":
            out.version = _num(v)
        elif k == "pmu-gp":
            out.gp = _num(v)
        elif k == "pmu-gp-width":
            out.width = _num(v)
        elif k == "pmu-fixed":
            out.fixed = _num(v)
        elif k == "pmu-fixed-bitmap":
            bitmap = _num(v)
        elif k == "pmu-fw-writes":
            out.fw_writes = v == "on"
        elif k == "pmu-lbr-depth":
            out.lbr = _num(v)
        elif k == "pmu-pebs-format":
            out.pebs = _num(v)
        elif k == "pmu-lbr" and v == "off":
            out.lbr = None
        elif k == "pmu-lbr" and v == "arch":
            out.lbr = int(kv.get("pmu-lbr-depth", 32))
        else:
            raise ShapeError(f"{k}={v}: not modelled by harness/pmu_shape.py")
    if out.version < 2:
        out.fixed = 0   # fixed counters came with version 2 (SDM vol. 3B)
    # Fixed counter i exists if ECX[i] or EDX[4:0] > i (SDM vol. 2A, CPUID.0AH;
    # ECX from version 5).
    mask = (1 << out.fixed) - 1
    if out.version >= 5:
        mask |= bitmap
    out.fixed = bin(mask).count("1")
    # PERF_METRICS divides fixed counter 3's slots: gone with the counter
    # (x86pmu_perf_metrics_settle; the named shapes' counters are CPUID.23H's).
    if "pmu-shape" not in kv and not (mask >> 3) & 1:
        out.perf_metrics = out.td_level2 = False
    return out


def _amd(model, kv):
    family, mdl = AMD_MODELS[model]
    for k, v in kv.items():
        if k == "model":
            mdl = _num(v)
        elif k == "family":
            family = _num(v)
    # APM vol. 2, 13.2 and emu/model/x86-pmu-config.c amd_shape()
    core = family >= 0x15
    v2 = (family == 0x19 and (0x10 <= mdl <= 0x1F or 0x60 <= mdl <= 0x7F
                              or 0xA0 <= mdl <= 0xAF)) or family >= 0x1A
    out = Shape("amd", 2 if v2 else 0, 6 if core else 4, 48, 0, perfmon_v2=v2)
    if v2:
        out.lbr = 16
    for k, v in kv.items():
        if k in NEUTRAL or k in ("model", "family"):
            continue
        if k == "pmu-perfmon-v2":
            out.perfmon_v2 = v == "on"
            out.version = 2 if out.perfmon_v2 else 0
        elif k == "pmu-gp" and out.perfmon_v2:
            out.gp = _num(v)
        elif k == "pmu-lbr" and v == "off":
            out.lbr = None
        elif k == "pmu-lbr-depth":
            out.lbr = _num(v)
        else:
            raise ShapeError(f"{k}={v}: not modelled by harness/pmu_shape.py")
    return out
