/* Ending a run. Under QEMU the isa-debug-exit device (iobase 0xf4) turns
 * the verdict into QEMU's exit status; on hardware the exit= action runs:
 * ACPI S5 power-off (ACPI 6.5, 7.4.2 \_S5 and 4.8.3.2.1 PM1 control),
 * reset through the FADT reset register, port 0xCF9, then the keyboard
 * controller, or halt. */
#include "arch/x86/pc/platform_exit.h"

#include <stdbool.h>

#include "arch/x86/cpu.h"
#include "arch/x86/hypervisor.h"
#include "arch/x86/pc/console.h"
#include "lib/acpi.h"

#define PM1_SLP_EN (1u << 13)
#define PM1_SLP_TYP_SHIFT 10

static enum exit_action exit_action = EXIT_ACTION_AUTO;

void platform_exit_set_action(enum exit_action a)
{
	exit_action = a;
}

_Noreturn void cpu_halt_forever(void)
{
	for (;;) {
		irq_disable();
		hlt();
	}
}

/* QEMU's TCG and KVM identify themselves in a hypervisor leaf: under
 * them the isa-debug-exit device is ours to use (another VMM on KVM
 * ignores the port write, and the halt below follows). */
static bool running_under_qemu(void)
{
	return hypervisor_is(HV_TCG) || hypervisor_is(HV_KVM);
}

static void acpi_poweroff(void)
{
	struct acpi_fadt_info f;
	if (acpi_fadt(&f) != 0 || !f.has_s5 || !f.pm1a_cnt)
		return;
	outw(f.pm1a_cnt, (uint16_t)((f.slp_typa << PM1_SLP_TYP_SHIFT) | PM1_SLP_EN));
	if (f.pm1b_cnt)
		outw(f.pm1b_cnt, (uint16_t)((f.slp_typb << PM1_SLP_TYP_SHIFT) | PM1_SLP_EN));
}

static void reset_machine(void)
{
	struct acpi_fadt_info f;
	if (acpi_fadt(&f) == 0 && f.has_reset) {
		if (f.reset_space == 1)
			outb((uint16_t)f.reset_addr, f.reset_value);
		else if (f.reset_space == 0)
			*(volatile uint8_t *)f.reset_addr = f.reset_value;
	}
	outb(0xcf9, 0x06); /* PCI reset control: full reset */
	for (int i = 0; i < 100000 && (inb(0x64) & 0x02); i++)
		cpu_relax();
	outb(0x64, 0xfe); /* keyboard controller: pulse reset line */
}

_Noreturn void platform_exit(enum exit_code code)
{
	enum exit_action a = exit_action;

	console_flush();
	if (a == EXIT_ACTION_AUTO)
		a = running_under_qemu() ? EXIT_ACTION_QEMU : EXIT_ACTION_HALT;
	switch (a) {
	case EXIT_ACTION_QEMU:
		outl(QEMU_DEBUG_EXIT_PORT, code);
		break; /* no debug-exit device: fall through to halt */
	case EXIT_ACTION_POWEROFF: acpi_poweroff(); break;
	case EXIT_ACTION_REBOOT: reset_machine(); break;
	default: break;
	}
	cpu_halt_forever();
}
