/* How the run ends: QEMU's isa-debug-exit with a verdict code, or on
 * hardware the exit= action (halt, reboot, poweroff). */
#ifndef ARCH_X86_PC_PLATFORM_EXIT_H
#define ARCH_X86_PC_PLATFORM_EXIT_H

/* QEMU's isa-debug-exit device (-device isa-debug-exit,iobase=0xf4):
 * a write of code makes QEMU exit with status (code << 1) | 1. */
#define QEMU_DEBUG_EXIT_PORT 0xf4
/* Status 127; asm-safe, for boot/entry.S's exits before long mode. */
#define EXIT_CODE_PANIC 0x3f

#ifndef __ASSEMBLY__
/* The isa-debug-exit codes. Code 0 (status 1) is also QEMU's own error
 * status, so no verdict uses it. */
enum exit_code {
	EXIT_PASS = 0x10,             /* status 33: no test failed */
	EXIT_FAIL = 0x11,             /* status 35: some test failed */
	EXIT_ALL_SKIP = 0x26,         /* status 77: every test skipped */
	EXIT_PANIC = EXIT_CODE_PANIC, /* status 127: kernel panic */
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

#endif
