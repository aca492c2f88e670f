/* The kernel command-line options, parsed once at boot. */
#ifndef BOOT_OPTIONS_H
#define BOOT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/cmdline.h"
#include "modes/modes.h"

/* debug.fault=: a fault outside any test, to prove the panic path. */
enum debug_fault { DEBUG_FAULT_NONE, DEBUG_FAULT_UD, DEBUG_FAULT_DF };

struct options {
	char tests[1024];   /* tests=glob,glob,-glob */
	uint64_t cpus;      /* cpus=N: use at most N CPUs (0 = all) */
	int exit;           /* exit=auto|qemu|halt|reboot|poweroff (enum exit_action) */
	char console[16];   /* console=com1..com4|0xPORT|debugcon */
	uint64_t timeout_s; /* timeout=S: per-test budget in seconds */
	bool pmu_takeover;  /* pmu.takeover=1: reprogram counters found in use */
	int pmu_pmi;        /* pmu.pmi=fixed|nmi */
	int mode;           /* mode=test|monitor|sample (enum mode_kind) */
	/* The modes' options (events=, interval=, duration=, monitor.cpus=,
	 * workload=, size=, ring=, overwrite=); its strings are the buffers
	 * below, "" until given. */
	struct mode_opts mode_opts;
	char mode_events[512], mode_cpus[128], mode_workload[16];
	int debug_fault;    /* debug.fault=none|ud|df (enum debug_fault): fault outside any test */
	char hv_kernel[32]; /* hv.kernel=X.Y[.Z]: the host's Linux under local KVM (pmutest-run passes it) */
	uint32_t hv_kernel_version; /* hv.kernel= as DEV_LINUX_VERSION(x, y, z); 0 when not given */
	uint16_t console_port;      /* resolved from console= */
	bool console_debugcon;      /* console=debugcon: port 0xe9, written without a UART */
};

extern struct options options;
extern struct cmdline_result options_result;

/* Parse the command line into `options`; errors land in options_result
 * and are reported by the boot.cmdline test. Never fails. */
void options_parse(const char *cmdline, size_t len);
/* The option table, for printing the help in diagnostics. */
const struct cmdline_opt *options_table(size_t *n);

#endif
