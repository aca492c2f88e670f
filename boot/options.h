/* The kernel command-line options, parsed once at boot. */
#ifndef BOOT_OPTIONS_H
#define BOOT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/cmdline.h"

enum boot_mode { BOOT_MODE_TEST, BOOT_MODE_MONITOR, BOOT_MODE_SAMPLE };

struct options {
	char tests[1024];       /* tests=glob,glob,-glob */
	uint64_t cpus;          /* cpus=N: use at most N CPUs (0 = all) */
	int exit;               /* exit=auto|qemu|halt|reboot|poweroff (enum exit_action) */
	char console[16];       /* console=com1..com4|0xPORT */
	uint64_t timeout_s;     /* timeout=S: per-test budget in seconds */
	bool pmu_takeover;      /* pmu.takeover=1: reprogram counters found in use */
	int pmu_pmi;            /* pmu.pmi=fixed|nmi */
	int mode;               /* mode=test|monitor|sample (enum boot_mode) */
	/* Shared by monitor and sample mode: events, duration, CPUs, workload. */
	char mon_events[512];   /* events=: the modes' event list */
	uint64_t mon_interval_ms; /* interval=MS */
	uint64_t mon_duration_ms; /* duration=MS */
	char mon_cpus[128];     /* monitor.cpus=LIST */
	char mon_workload[16];  /* workload=NAME */
	uint64_t mon_size;      /* size=N */
	uint64_t sample_ring;   /* ring=BYTES: sample mode's ring per CPU */
	bool sample_overwrite;  /* overwrite=0|1: sample mode keeps the newest records */
	int debug_fault;        /* debug.fault=none|ud|df: fault outside any test (proves the panic path) */
	uint16_t console_port;  /* resolved from console= */
};

extern struct options options;
extern struct cmdline_result options_result;

/* Parse the command line into `options`; errors land in options_result
 * and are reported by the boot.cmdline test. Never fails. */
void options_parse(const char *cmdline, size_t len);
/* The option table, for printing the help in diagnostics. */
const struct cmdline_opt *options_table(size_t *n);

#endif
