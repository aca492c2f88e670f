/* kmain: the BSP's path from the boot code to the verdict. Order matters:
 * per-CPU data first (exception fixups need it), the loader's info copied
 * before any memory outside the image is touched, then console, tables,
 * ACPI, time, the other CPUs, and the tests. */
#include <stddef.h>

#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/paging.h"
#include "arch/x86/pc/console.h"
#include "arch/x86/pc/legacy_irq.h"
#include "arch/x86/pc/platform_exit.h"
#include "arch/x86/pc/uart.h"
#include "arch/x86/sections.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "boot/boot.h"
#include "boot/bootinfo.h"
#include "boot/options.h"
#include "boot/pmutest_version.h"
#include "lib/acpi.h"
#include "lib/fbcon.h"
#include "lib/mptable.h"
#include "modes/modes.h"
#include "modes/monitor.h"
#include "modes/sample.h"
#include "pmu/kernel/pmi_lvt.h"
#include "pmu/pmu.h"
#include "tests/deviations.h"
#include "tests/ktest_internal.h"

struct boot_info boot_info;
int boot_info_status;
int boot_acpi_status;

/* Physical memory as the parsers read it: the identity map, as far as it
 * goes (4 GiB at boot, all RAM after paging_extend). Whether an address 0
 * means "not given" is the parser's to say (ACPI's does; a multiboot1 flag
 * vouches for its pointer, and kexec-tools puts the memory map at 0), so
 * the first page is read through the map's alias, never as a null pointer. */
static const void *phys_identity(uint64_t phys, size_t len)
{
	if (phys + len > paging_mapped_end() || phys + len < phys)
		return NULL;
	if (phys < PAGING_NULL_PAGE)
		return (const void *)(uintptr_t)(PAGING_ALIAS_BASE + phys);
	return (const void *)(uintptr_t)phys;
}

/* Where the RSDP came from, for the boot facts. */
static const char *acpi_source = "nowhere (no ACPI tables)";

static void init_acpi(void)
{
	boot_acpi_status = -1;
	if (boot_info.rsdp_len) {
		boot_acpi_status = acpi_init(boot_info.rsdp, boot_info.rsdp_len);
		if (boot_acpi_status == 0)
			acpi_source = boot_info.rsdp_from_start_info ? "start_info" : "the multiboot2 tag";
	}
	if (boot_acpi_status != 0) {
		boot_acpi_status = acpi_init_scan_bios();
		if (boot_acpi_status == 0)
			acpi_source = "the BIOS area scan";
	}
}

/* Where the memory map came from: the protocol's own structure. */
static const char *memory_map_source(void)
{
	if (!boot_info.mmap_count)
		return "nowhere";
	switch (boot_info.protocol) {
	case BOOT_PROTO_MB1: return "the multiboot1 info";
	case BOOT_PROTO_MB2: return "the multiboot2 tag";
	case BOOT_PROTO_PVH: return "start_info";
	default: return "nowhere";
	}
}

/* Whether the framebuffer console came up, and whether it draws in a RAM
 * shadow: told with the other boot facts, not when it starts. It starts
 * before the KTAP header, and KTAP parsers drop every line before
 * "KTAP version 1" as preamble (Linux Documentation/dev-tools/ktap.rst). */
static bool fbcon_started, fbcon_shadowed;

/* Mirror the console onto the loader's framebuffer (UEFI GOP / VBE), for
 * machines without a serial port. Only a direct-RGB one inside the
 * identity map; fbcon refuses formats it cannot draw. */
static void start_framebuffer_console(void)
{
	const struct boot_fb *b = &boot_info.fb;
	if (!boot_info.has_fb || b->type != BOOT_FB_RGB ||
	    b->addr + (uint64_t)b->pitch * b->height > paging_mapped_end())
		return;
	struct fbcon_fb f = {
		.base = (uint8_t *)(uintptr_t)b->addr,
		.pitch = b->pitch,
		.width = b->width,
		.height = b->height,
		.bpp = b->bpp,
		.red_pos = b->red_pos,
		.red_size = b->red_size,
		.green_pos = b->green_pos,
		.green_size = b->green_size,
		.blue_pos = b->blue_pos,
		.blue_size = b->blue_size,
	};
	if (!fbcon_init(&f))
		return;
	size_t bytes = (size_t)b->pitch * b->height;
	fbcon_shadowed = fbcon_use_shadow(bootmem_alloc(bytes), bytes);
	fbcon_started = true;
}

/* Firmware may leave the PICs and I/O APIC inputs live (OVMF does); none
 * of their interrupts has a handler here. */
static void silence_legacy_interrupts(void)
{
	struct acpi_madt_info m;
	struct acpi_cpu one;
	struct mp_info mp;
	struct mp_cpu mp_one;
	pic_mask_all();
	if (acpi_madt_cpus(&one, 1, &m) >= 0) {
		for (unsigned i = 0; i < m.nioapic; i++)
			ioapic_mask_all(m.ioapic_phys[i]);
	} else if (mptable_cpus(phys_identity, &mp_one, 1, &mp) >= 0) {
		/* No ACPI: the MP table lists the I/O APICs. */
		for (unsigned i = 0; i < mp.nioapic; i++)
			ioapic_mask_all(mp.ioapic_phys[i]);
	}
}

static void print_diag_line(void *ctx, const char *line)
{
	console_printf("# %s\n", line);
}

/* debug.fault=: prove that a fault outside any test ends in a register
 * dump and the panic exit code, never in a silent reset. The double fault
 * comes from a #PF whose delivery itself faults: the stack it would push
 * onto is unmapped, and #DF has its own IST stack (gdt.c). */
static void raise_debug_fault(enum debug_fault which)
{
	if (which == DEBUG_FAULT_UD)
		__asm__ volatile("ud2");
	if (which == DEBUG_FAULT_DF)
		__asm__ volatile("movabsq $0x0000700000000000, %%rsp\n\tpushq $0" ::: "memory");
}

static void pmi_init_cpu_cb(void *arg)
{
	pmi_init_cpu();
}

/* PMIs seen during the run, per CPU that saw any (spurious ones included:
 * they are never ignored silently). */
static void report_pmi_activity(void)
{
	for (unsigned cpu = 0; cpu < smp_num_cpus(); cpu++) {
		struct pmu_pmi_stats st;
		pmu_pmi_get_stats(cpu, &st);
		if (!st.pmis && !st.spurious)
			continue;
		pmu_pmi_report(cpu, print_diag_line, NULL);
		uint64_t mean, max;
		pmi_cost(cpu, &mean, &max);
		console_printf("# pmi: cpu %u handler cost: mean %lu TSC ticks (%lu ns), max %lu\n", cpu,
			       mean, tsc_to_us(mean * 1000), max);
	}
}

static void print_boot_facts(void)
{
	const struct timer_info *ti = timer_info();
	const struct smp_summary *s = smp_summary();
	const char *loader = boot_info.loader[0]                    ? boot_info.loader
			     : boot_info.protocol == BOOT_PROTO_PVH ? "a PVH loader"
								    : "an unnamed loader";
	console_printf("# pmutest %s: booted by %s (%s), command line \"%.*s\"%s\n", PMUTEST_VERSION, loader,
		       bootinfo_protocol_name(boot_info.protocol), (int)boot_info.cmdline_len,
		       boot_info.cmdline, boot_info.cmdline_truncated ? " (truncated)" : "");
	console_printf(
		"# boot: entry %s, memory map from %s (%zu entries), ACPI RSDP from %s, CPUs from %s\n",
		bootinfo_protocol_name(boot_info.protocol), memory_map_source(), boot_info.mmap_count,
		acpi_source, s->cpu_source);
	console_printf("# time: TSC %lu kHz from %s, LAPIC timer %lu kHz (divide 16)\n", ti->tsc_hz / 1000,
		       ti->tsc_source, ti->lapic_hz / 1000);
	console_printf("# smp: %u of %u CPUs online (%s)\n", s->online,
		       s->from_madt || s->from_mptable ? s->madt_enabled : 1,
		       lapic_x2apic_mode() ? "x2apic" : "xapic");
	console_printf("# smp: AP bring-up took %lu us of guest time%s%s\n", tsc_to_us(s->bringup_tsc),
		       s->why_bsp_only ? "; BSP only: " : "", s->why_bsp_only ? s->why_bsp_only : "");
	if (fbcon_started) {
		const struct boot_fb *b = &boot_info.fb;
		console_printf("# fbcon: %ux%u %u bpp at %#lx, %ux%u cells%s\n", b->width, b->height, b->bpp,
			       b->addr, fbcon_cols(), fbcon_rows(), fbcon_shadowed ? ", drawn in RAM" : "");
	}
}

void kmain(uint32_t magic, uint32_t info_phys)
{
	smp_early_bsp();
	bootinfo_set_phys_accessor(phys_identity);
	acpi_set_phys_accessor(phys_identity);
	boot_info_status = bootinfo_parse(magic, (const void *)(uintptr_t)info_phys, &boot_info);
	options_parse(boot_info.cmdline, boot_info.cmdline_len);
	dev_set_host_kernel(options.hv_kernel_version);
	console_init(options.console_port, options.console_debugcon);
	platform_exit_set_action((enum exit_action)options.exit);

	uint64_t ram_end = 0;
	bootinfo_usable_max(&boot_info, &ram_end);
	bootmem_init(boot_info.mmap, boot_info.mmap_count, paging_extend(boot_pdpt, ram_end));
	start_framebuffer_console();
	init_acpi();
	silence_legacy_interrupts();

	lapic_global_init();
	smp_init_bsp();
	timer_calibrate();

	/* A mode (mode=monitor, mode=sample) is the one test that runs it. */
	struct ktest_config cfg = {
		.select = options.tests,
		.default_budget_ms = (uint32_t)options.timeout_s * 1000,
	};
	enum mode_kind mode = (enum mode_kind)options.mode;
	mode_request(mode, &options.mode_opts);
	if (mode_test_name(mode))
		cfg.select = mode_test_name(mode);
	ktest_begin(&cfg);
	uint64_t trampoline = 0;
	bootinfo_find_low_page(&boot_info, SMP_TRAMPOLINE_BELOW, (uint64_t)_kernel_start,
			       (uint64_t)_kernel_end, &trampoline);
	smp_start_aps(trampoline, (unsigned)options.cpus);
	/* Its budget, once the CPUs are up: the run's length, set-up, and
	 * printing what it prints. */
	uint64_t mode_ms = mode == MODE_MONITOR  ? monitor_budget_ms(&options.mode_opts)
			   : mode == MODE_SAMPLE ? sample_mode_budget_ms(&options.mode_opts, smp_num_cpus())
						 : 0;
	if (mode_ms)
		cfg.default_budget_ms = mode_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)mode_ms;
	print_boot_facts();
	irq_enable();
	/* The PMU of every CPU: caps, the real-PMU probe, counters found in
	 * use (reported, and left alone unless pmu.takeover=1). */
	struct pmu_init_opts pmu_opts = { .takeover = options.pmu_takeover };
	pmu_init_all(&pmu_opts, on_cpu);
	pmu_boot_report(print_diag_line, NULL);
	pmi_configure((enum pmi_delivery)options.pmu_pmi);
	on_each_cpu(pmi_init_cpu_cb, NULL);

	raise_debug_fault((enum debug_fault)options.debug_fault);
	struct ktest_totals t = ktest_run_all(&cfg);
	report_pmi_activity();
	ktest_report_deviations();
	/* XFAIL results count as passed; the xfail count appears only when
	 * there is one, so a run without deviations keeps the old line. */
	if (t.xfail)
		console_printf("# pmutest: %u passed, %u failed, %u skipped, %u xfail\n", t.passed, t.failed,
			       t.skipped, t.xfail);
	else
		console_printf("# pmutest: %u passed, %u failed, %u skipped\n", t.passed, t.failed,
			       t.skipped);
	enum exit_code code = t.failed ? EXIT_FAIL : (t.skipped && !t.passed) ? EXIT_ALL_SKIP : EXIT_PASS;
	console_printf("# pmutest: end exit=%#x\n", code);
	platform_exit(code);
}
