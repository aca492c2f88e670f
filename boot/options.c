/* Command-line options: defaults, the table the parser reads, and the
 * console= port resolution. */
#include "boot/options.h"

#include "arch/x86/pc/platform_exit.h"
#include "lib/bits.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "tests/deviations.h"

struct options options = {
	.exit = EXIT_ACTION_AUTO,
	.console = "com1",
	.timeout_s = 10,
	.console_port = 0x3f8,
	.mode_opts = {
		.events = options.mode_events,
		.cpus = options.mode_cpus,
		.workload = options.mode_workload,
	},
};
struct cmdline_result options_result;

static const char *const exit_choices[] = { "auto", "qemu", "halt", "reboot", "poweroff", NULL };
static const char *const pmi_choices[] = { "fixed", "nmi", NULL };
static const char *const fault_choices[] = { "none", "ud", "df", NULL };
static const char *const mode_choices[] = { "test", "monitor", "sample", NULL };
_Static_assert(DEBUG_FAULT_NONE == 0 && DEBUG_FAULT_UD == 1 && DEBUG_FAULT_DF == 2,
	       "fault_choices follows enum debug_fault");
_Static_assert(MODE_TEST == 0 && MODE_MONITOR == 1 && MODE_SAMPLE == 2 && MODE_NR == 3,
	       "mode_choices follows enum mode_kind");
_Static_assert(EXIT_ACTION_AUTO == 0 && EXIT_ACTION_QEMU == 1 && EXIT_ACTION_HALT == 2 &&
		       EXIT_ACTION_REBOOT == 3 && EXIT_ACTION_POWEROFF == 4,
	       "exit_choices follows enum exit_action");

static const struct cmdline_opt table[] = {
	{ "tests", CMDLINE_STR, options.tests, sizeof(options.tests), NULL, 0, 0,
	  "comma-separated globs of tests to run; -glob excludes (default: all but selftest.*)" },
	{ "cpus", CMDLINE_UINT, &options.cpus, 0, NULL, 1, 4096, "use at most N CPUs" },
	{ "exit", CMDLINE_ENUM, &options.exit, 0, exit_choices, 0, 0,
	  "what to do at the end (auto: qemu under QEMU, else halt)" },
	{ "console", CMDLINE_STR, options.console, sizeof(options.console), NULL, 0, 0,
	  "serial port: com1..com4 or an I/O port like 0x2f8; debugcon: the write-only debug port 0xe9 (Xen's HVM/PVH guests, QEMU -debugcon)" },
	{ "timeout", CMDLINE_UINT, &options.timeout_s, 0, NULL, 1, 3600,
	  "per-test time budget in seconds (default 10)" },
	{ "pmu.takeover", CMDLINE_BOOL, &options.pmu_takeover, 0, NULL, 0, 0,
	  "reprogram PMU counters that were already in use at boot" },
	{ "pmu.pmi", CMDLINE_ENUM, &options.pmu_pmi, 0, pmi_choices, 0, 0,
	  "PMI delivery: fixed vector or NMI" },
	{ "hv.kernel", CMDLINE_STR, options.hv_kernel, sizeof(options.hv_kernel), NULL, 0, 0,
	  "the host's Linux version under KVM, X.Y[.Z] (tools/pmutest-run passes it): KVM deviations fixed before it are FAILs" },
	{ "debug.fault", CMDLINE_ENUM, &options.debug_fault, 0, fault_choices, 0, 0,
	  "raise #UD or a double fault before the tests, outside any test: must end in a panic dump" },
	{ "mode", CMDLINE_ENUM, &options.mode, 0, mode_choices, 0, 0,
	  "test: run the tests (default); monitor: print event deltas per CPU every interval; sample: sample events, print the records" },
	{ "events", CMDLINE_STR, options.mode_events, sizeof(options.mode_events), NULL, 0, 0,
	  "monitor/sample: comma-separated events (monitor default instructions,cycles,branch-misses, none = work only; sample: each may take a period, cycles/period=N/, default cycles/period=10000000/)" },
	{ "interval", CMDLINE_UINT, &options.mode_opts.interval_ms, 0, NULL, 10, 3600000,
	  "monitor: milliseconds between rows (default 1000)" },
	{ "duration", CMDLINE_UINT, &options.mode_opts.duration_ms, 0, NULL, 1, 86400000,
	  "monitor/sample: milliseconds to run (default 10000 monitor, 1000 sample)" },
	{ "monitor.cpus", CMDLINE_STR, options.mode_cpus, sizeof(options.mode_cpus), NULL, 0, 0,
	  "monitor/sample: CPUs to run on, e.g. 1-3 or 0,2 (default all)" },
	{ "workload", CMDLINE_STR, options.mode_workload, sizeof(options.mode_workload), NULL, 0, 0,
	  "monitor/sample: loop, chase, branchy or memcpy (default loop)" },
	{ "size", CMDLINE_UINT, &options.mode_opts.size, 0, NULL, 1, 1ull << 32,
	  "monitor/sample: the workload's size (iterations or bytes; default per workload)" },
	{ "ring", CMDLINE_UINT, &options.mode_opts.ring_bytes, 0, NULL, 4096, 16u << 20,
	  "sample: ring bytes per CPU, a power of two (default 65536)" },
	{ "overwrite", CMDLINE_BOOL, &options.mode_opts.overwrite, 0, NULL, 0, 0,
	  "sample: 1 keeps the newest records when the ring is full (default 0: drop and count the new ones)" },
};

const struct cmdline_opt *options_table(size_t *n)
{
	*n = ARRAY_LEN(table);
	return table;
}

static void add_error(const char *msg)
{
	if (options_result.nerrors < CMDLINE_MAX_ERRORS)
		strlcpy(options_result.errors[options_result.nerrors], msg, CMDLINE_ERROR_LEN);
	options_result.nerrors++;
}

/* COM1-4 at their PC/AT I/O ports; anything else as a number. */
static void resolve_console(void)
{
	static const uint16_t com[] = { 0x3f8, 0x2f8, 0x3e8, 0x2e8 };
	const char *c = options.console;
	/* The "port E9" debug console: bytes written to I/O port 0xe9 go
	 * to the hypervisor's log (Xen's hvm_print_line for HVM and PVH
	 * guests, QEMU's isa-debugcon); nothing behind it to probe. */
	if (strcmp(c, "debugcon") == 0) {
		options.console_port = 0xe9;
		options.console_debugcon = true;
		return;
	}
	if ((c[0] == 'c' || c[0] == 'C') && strlen(c) == 4 && c[3] >= '1' && c[3] <= '4') {
		options.console_port = com[c[3] - '1'];
		return;
	}
	uint64_t v = 0;
	if (parse_u64(c, strlen(c), &v) == PARSE_OK && v && v <= 0xffff) {
		options.console_port = (uint16_t)v;
		return;
	}
	char msg[CMDLINE_ERROR_LEN];
	ksnprintf(msg, sizeof(msg), "console=%s: not com1..com4 or an I/O port; using com1", c);
	add_error(msg);
}

/* hv.kernel=X.Y[.Z] (anything after the numbers, "-cloud-amd64", ignored). */
static void resolve_hv_kernel(void)
{
	const char *p = options.hv_kernel;
	uint64_t part[3] = { 0, 0, 0 };
	unsigned n = 0;

	if (!*p)
		return;
	while (n < 3 && *p >= '0' && *p <= '9') {
		const char *start = p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (parse_u64(start, (size_t)(p - start), &part[n]) != PARSE_OK)
			break;
		n++;
		if (*p != '.')
			break;
		p++;
	}
	if (n < 2 || part[0] > 255 || part[1] > 255) {
		char msg[CMDLINE_ERROR_LEN];
		ksnprintf(msg, sizeof(msg), "hv.kernel=%s: not a version X.Y[.Z]; ignored",
			  options.hv_kernel);
		add_error(msg);
		return;
	}
	options.hv_kernel_version = DEV_LINUX_VERSION((unsigned)part[0], (unsigned)part[1],
						      part[2] > 255 ? 255u : (unsigned)part[2]);
}

void options_parse(const char *cmdline, size_t len)
{
	cmdline_parse(cmdline, len, table, ARRAY_LEN(table), &options_result);
	resolve_console();
	resolve_hv_kernel();
}
