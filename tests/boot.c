/* Boot checks: what the loader handed over and how the kernel read it. */
#include "boot/boot.h"
#include "arch/x86/paging.h"
#include "arch/x86/sections.h"
#include "arch/x86/smp.h"
#include "arch/x86/timer.h"
#include "boot/bootinfo.h"
#include "boot/options.h"
#include "lib/acpi.h"
#include "lib/string.h"
#include "tests/ktest.h"

KTEST("boot", cmdline, NULL, 0, "the command line has no unknown option, bad value or garbage byte")
{
	size_t n;
	const struct cmdline_opt *opt = options_table(&n);
	diag("command line (%zu bytes%s): \"%.*s\"", boot_info.cmdline_len,
	     boot_info.cmdline_truncated ? ", truncated" : "", (int)boot_info.cmdline_len, boot_info.cmdline);
	for (size_t i = 0; i < n; i++)
		diag("option %s: %s", opt[i].name, opt[i].help);
	unsigned shown = options_result.nerrors < CMDLINE_MAX_ERRORS ? options_result.nerrors
								     : CMDLINE_MAX_ERRORS;
	for (unsigned i = 0; i < shown; i++)
		check(false, "command line: %s", options_result.errors[i]);
	check(options_result.nerrors == 0, "expected no command-line errors, saw %u", options_result.nerrors);
}

KTEST("boot", boot_info, NULL, 0, "the loader's info parses cleanly; multiboot1, multiboot2 or PVH")
{
	check(boot_info_status == 0,
	      "expected the loader's info to parse cleanly, bootinfo_parse returned %d", boot_info_status);
	check(boot_info.protocol == BOOT_PROTO_MB1 || boot_info.protocol == BOOT_PROTO_MB2 ||
		      boot_info.protocol == BOOT_PROTO_PVH,
	      "expected multiboot1, multiboot2 or PVH, saw protocol %d", boot_info.protocol);
	if (boot_info.protocol == BOOT_PROTO_PVH)
		diag("PVH: hvm_start_info version %u at %#lx", boot_info.pvh_version, boot_info.info_phys);
	if (boot_info.has_fb)
		diag("framebuffer: %ux%u, %u bpp, type %u, pitch %u, at %#lx", boot_info.fb.width,
		     boot_info.fb.height, boot_info.fb.bpp, boot_info.fb.type, boot_info.fb.pitch,
		     boot_info.fb.addr);
	else
		diag("no framebuffer from the loader");
}

KTEST("boot", memory_map, NULL, 0, ">= 16 MiB of RAM in the memory map, the kernel inside it")
{
	uint64_t avail = 0, kstart = (uint64_t)_kernel_start, kend = (uint64_t)_kernel_end;
	bool kernel_in_ram = false;
	for (size_t i = 0; i < boot_info.mmap_count; i++) {
		const struct mem_region *m = &boot_info.mmap[i];
		diag("mmap %016lx-%016lx type %u", m->base, m->base + m->len - 1, m->type);
		if (m->type != MEM_AVAILABLE)
			continue;
		avail += m->len;
		kernel_in_ram |= m->base <= kstart && kend <= m->base + m->len;
	}
	diag("available RAM %lu MiB; identity map ends at %#lx", avail >> 20, paging_mapped_end());
	check(boot_info.mmap_count > 0, "expected a memory map from the loader, saw none");
	check(avail >= 16u << 20, "expected at least 16 MiB of available RAM, saw %lu KiB", avail >> 10);
	check(kernel_in_ram, "expected the kernel image %#lx-%#lx inside available RAM", kstart, kend);
}

KTEST("boot", acpi, NULL, 0, "RSDP and RSDT/XSDT with good checksums, a MADT and a FADT")
{
	/* A machine without ACPI (Firecracker before 1.8; QEMU -machine pc,
	 * acpi=off) is not a broken one: no RSDP from the loader and none in
	 * the BIOS areas. Any RSDP found, however bad, is checked. */
	if (boot_acpi_status == ACPI_ENOTFOUND && !boot_info.rsdp_len && !acpi_scan_rsdp_seen())
		ktest_skip("no ACPI: no RSDP from the loader or in the BIOS areas (CPUs from %s)",
			   smp_summary()->cpu_source);
	diag("RSDP from %s, %s",
	     boot_info.rsdp_from_start_info ? "start_info"
	     : boot_info.rsdp_tag           ? "the multiboot2 tag"
					    : "the BIOS area scan",
	     acpi_uses_xsdt() ? "XSDT" : "RSDT");
	check(boot_acpi_status == 0, "expected ACPI tables (RSDP, RSDT/XSDT), acpi_init returned %d",
	      boot_acpi_status);
	check(acpi_find_table("APIC", 0) != NULL, "expected a MADT (signature APIC)");
	struct acpi_fadt_info f;
	if (check(acpi_fadt(&f) == 0, "expected a valid FADT"))
		diag("FADT: PM1a_CNT %#x, \\_S5 %s, reset register %s, PM timer port %#x", f.pm1a_cnt,
		     f.has_s5 ? "found" : "absent", f.has_reset ? "present" : "absent", f.pm_tmr_port);
}

KTEST("boot", tsc_calibration, NULL, 0, "a 100 MHz..10 GHz TSC, a ticking LAPIC timer, udelay() on time")
{
	const struct timer_info *ti = timer_info();
	diag("TSC %lu kHz from %s; LAPIC timer %lu kHz", ti->tsc_hz / 1000, ti->tsc_source,
	     ti->lapic_hz / 1000);
	check(ti->tsc_hz >= 100000000u && ti->tsc_hz <= 10000000000u,
	      "expected a TSC between 100 MHz and 10 GHz, saw %lu Hz", ti->tsc_hz);
	check(ti->lapic_hz > 0, "expected the LAPIC timer to tick, measured %lu Hz", ti->lapic_hz);
	/* The clock must move forward by about what udelay promised. */
	uint64_t t0 = uptime_us();
	udelay(2000);
	uint64_t dt = uptime_us() - t0;
	check(dt >= 2000 && dt < 200000, "expected udelay(2000) to take 2000..200000 us, took %lu us", dt);
}
