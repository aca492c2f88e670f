/* How the run ends: QEMU's isa-debug-exit with a verdict code, or on
 * hardware the exit= action (halt, reboot, poweroff). */
#ifndef ARCH_X86_PC_PLATFORM_EXIT_H
#define ARCH_X86_PC_PLATFORM_EXIT_H

/* isa-debug-exit codes; QEMU exits with status (code << 1) | 1. Code 0
 * (status 1) is also QEMU's own error status, so no verdict uses it. */
enum exit_code {
	EXIT_PASS = 0x10,     /* status 33: no test failed */
	EXIT_FAIL = 0x11,     /* status 35: some test failed */
	EXIT_ALL_SKIP = 0x26, /* status 77: every test skipped */
	EXIT_PANIC = 0x3f,    /* status 127: kernel panic */
};

enum exit_action {
	EXIT_ACTION_AUTO,
	EXIT_ACTION_QEMU,
	EXIT_ACTION_HALT,
	EXIT_ACTION_REBOOT,
	EXIT_ACTION_POWEROFF
};

void platform_exit_set_action(enum exit_action a);
_Noreturn void platform_exit(enum exit_code code);
/* Stop every other CPU (NMI-free: they are told through on_cpu). */
_Noreturn void cpu_halt_forever(void);

#endif
