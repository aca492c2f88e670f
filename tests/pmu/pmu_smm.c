/* IA32_DEBUGCTL.FREEZE_WHILE_SMM with a real SMI (SDM vol. 3B, "IA32_DEBUGCTL
 * MSR", bit 14, and "Filtering of SMM Handler Overhead"; offered where
 * IA32_PERF_CAPABILITIES[12] is set). With the bit set, SMI delivery clears
 * every enable bit of IA32_PERF_GLOBAL_CTRL, keeps a copy of IA32_DEBUGCTL
 * and turns off its LBR, BTF, TR and BTS before the handler runs; when the
 * handler's RSM ends SMM, DEBUGCTL gets its copy back and the enable bits
 * of GLOBAL_CTRL are "set to 1". So nothing the handler runs is counted or
 * recorded, and the counters go on counting after RSM.
 *
 * The SMI: a write to the APM control port 0xB2, which the chipset turns
 * into an SMI when firmware set APMC_EN (ICH9 LPC SMI_EN bit 5, PIIX4 PM
 * register 5Bh bit 1). On real firmware that runs its software-SMI
 * dispatcher with whatever command was written: unknown effects. So the
 * SMI is raised only where the firmware is known: SeaBIOS, named by the
 * SMBIOS BIOS Information (type 0) it writes itself, whose handler
 * (src/fw/smm.c handle_smi) acts on its own command 0xB5 alone (and on
 * the SMBASE relocation at POST) and otherwise returns with RSM; and only
 * on the boot processor, the one CPU whose SMBASE SeaBIOS relocated into
 * its SMRAM (an application processor's SMI would enter SMM at
 * 0x30000 + 0x8000, plain RAM). The SMI reaches that CPU alone: QEMU's
 * ICH9 raises an APM SMI on the CPU that wrote the port unless firmware
 * negotiated broadcast SMIs, which SeaBIOS never does, and its PIIX4 on
 * the first CPU. OVMF publishes its SMBIOS entry point in
 * the EFI configuration table, and its type 0 names EDK II, not SeaBIOS:
 * a UEFI boot SKIPs either way, as does every other firmware.
 * MSR_SMI_COUNT (MSR 34H, Nehalem on) before and after each window tells
 * whether the SMI happened.
 *
 * Each window is one asm statement between the two WRMSRs of
 * IA32_PERF_GLOBAL_CTRL: the command into AL, the port into DX, OUT, a
 * run of NOPs (an SMI raised by an I/O write may arrive a few
 * instructions later), RDMSR of GLOBAL_CTRL (what RSM left there), the
 * stop. The window without an SMI runs the very same instructions with
 * port 0x80 (the POST-code port, which nothing acts on) instead of 0xB2,
 * so the two counts differ by what the SMI added and nothing else. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/sections.h"
#include "lib/bits.h"
#include "lib/smbios.h"
#include "lib/string.h"
#include "pmu/intel/caps.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

#define SMM_APM_CNT 0xb2   /* APM control: ICH9 LPC, PIIX4 PM (ACPI's SMI_CMD) */
#define SMM_POST_PORT 0x80 /* the stand-in: POST codes, read by no one */
/* Not SeaBIOS's CALL32SMM_CMDID (0xB5), nor a chipset's ACPI enable/disable
 * command, which QEMU takes as such and raises no SMI for: 0x02/0x03 on
 * ICH9 (q35, hw/isa/lpc_ich9.c), 0xF1/0xF0 on PIIX4 (hw/acpi/piix4.c). */
#define SMM_CMD 0x5a
#define SMM_SETTLE "64" /* NOPs after the OUT, inside the window */
#define SMM_TRIALS 3    /* windows of each kind: the least count is the count */
#define SMM_ATTEMPTS 12 /* tries at one window with exactly the SMIs wanted */
#define SMM_FIRMWARE "SeaBIOS"

struct smm_window {
	uint64_t count[2]; /* per event */
	uint64_t smis;     /* MSR_SMI_COUNT's change across it */
	uint64_t gctl;     /* GLOBAL_CTRL read inside, after the OUT */
	uint64_t debugctl; /* DEBUGCTL read right after */
	int debugctl_fault;
};

static const void *smm_phys(uint64_t phys, size_t len)
{
	if (phys < PAGING_NULL_PAGE || phys + len < phys || phys + len > paging_mapped_end())
		return NULL;
	return (const void *)(uintptr_t)phys;
}

static const char *needs_smi(void)
{
	const char *why = pmu_needs_counting();
	const struct pmu_caps *c;
	struct smbios_bios bios;
	uint64_t v;
	int err;

	if (why)
		return why;
	c = pmu_caps();
	if (c->vendor != PMU_VENDOR_INTEL)
		return ktest_reason(
			"FREEZE_WHILE_SMM is Intel's (IA32_DEBUGCTL bit 14); vendor %s has no such control",
			c->vendor_id);
	if ((why = pmu_needs_global_ctrl()))
		return why;
	if (!intel_caps(c)->pdcm || !intel_caps(c)->perf_caps_valid)
		return "no IA32_PERF_CAPABILITIES (CPUID.01H:ECX[15] PDCM clear): FREEZE_WHILE_SMM not offered";
	if (!c->freeze_smm)
		return ktest_reason("IA32_PERF_CAPABILITIES %#lx: bit 12 (FREEZE_WHILE_SMM) clear",
				    (unsigned long)intel_caps(c)->perf_caps);
	if (rdmsr_safe(MSR_SMI_COUNT, &v) != 0)
		return "MSR_SMI_COUNT (34H) faults: an SMI could not be told from none";
	if (rdmsr_safe(MSR_IA32_APIC_BASE, &v) != 0 || !(v & BIT(APIC_BASE_BSP_BIT)))
		return "not the boot processor: only its SMBASE is known to be relocated";
	err = smbios_bios_info(smm_phys, &bios);
	if (err == SMBIOS_ENOTFOUND)
		return "no known-safe SMI source: no SMBIOS entry point in 0xF0000-0xFFFFF (UEFI, or no BIOS)";
	if (err != 0)
		return "no known-safe SMI source: the SMBIOS table names no BIOS (no type 0 structure)";
	if (strcmp(bios.vendor, SMM_FIRMWARE) != 0)
		return ktest_reason("no known-safe SMI source: firmware is \"%s\" %s, only " SMM_FIRMWARE
				    "'s SMI handler is known to do nothing for an unknown command",
				    bios.vendor, bios.version);
	return NULL;
}

/* DEBUGCTL for a window, and as soon as it ends; the LBR stack emptied
 * before it, when not NULL. */
static uint64_t smm_debugctl_before, smm_debugctl_after;
static const struct pmu_lbr_caps *smm_lbr;

/* One window: count evs around an OUT of SMM_CMD to port, with DEBUGCTL
 * smm_debugctl_before; then DEBUGCTL is read and set to
 * smm_debugctl_after. */
static void smm_window(struct pmu_event *const *evs, unsigned n, uint64_t all, uint16_t port,
		       struct smm_window *w)
{
	struct pmu_bracket_regs br;
	uint64_t smi0 = 0, smi1 = 0;
	uint32_t glo, ghi;

	*w = (struct smm_window){ 0 };
	if (smm_lbr)
		pmu_lbr_clear(smm_lbr);
	wrmsr_safe(MSR_IA32_DEBUGCTL, smm_debugctl_before);
	if (!check(pmu_events_arm(evs, n, &br) == PMU_OK, "arming the counters failed: %s", evs[0]->reason))
		return;
	/* Every counter's enable: what RSM sets after a frozen SMM. */
	br.on |= all;
	uint32_t lo = (uint32_t)br.on, hi = (uint32_t)(br.on >> 32);
	bool was = irq_save();
	rdmsr_safe(MSR_SMI_COUNT, &smi0);
	__asm__ volatile("wrmsr\n\t"
			 "mov %k[cmd], %%eax\n\t"
			 "mov %k[port], %%edx\n\t"
			 "outb %%al, %%dx\n\t"
			 ".rept " SMM_SETTLE "\n\t"
			 "nop\n\t"
			 ".endr\n\t"
			 "rdmsr\n\t"
			 "mov %%eax, %k[glo]\n\t"
			 "mov %%edx, %k[ghi]\n\t"
			 "mov %k[off_lo], %%eax\n\t"
			 "mov %k[off_hi], %%edx\n\t"
			 "wrmsr\n\t"
			 : "+&a"(lo), "+&d"(hi), [glo] "=&r"(glo), [ghi] "=&r"(ghi)
			 : "c"(br.msr), [cmd] "r"((uint32_t)SMM_CMD), [port] "r"((uint32_t)port),
			   [off_lo] "r"((uint32_t)br.off), [off_hi] "r"((uint32_t)(br.off >> 32))
			 : "cc", "memory");
	/* No branch between the window and LBR's stop: the handler's
	 * records, if any, stay on the stack. */
	w->debugctl_fault = rdmsr_safe(MSR_IA32_DEBUGCTL, &w->debugctl);
	wrmsr_safe(MSR_IA32_DEBUGCTL, smm_debugctl_after);
	rdmsr_safe(MSR_SMI_COUNT, &smi1);
	irq_restore(was);
	pmu_events_disarm(evs, n);
	w->smis = smi1 - smi0;
	w->gctl = (uint64_t)ghi << 32 | glo;
	for (unsigned i = 0; i < n; i++)
		w->count[i] = pmu_event_count(evs[i]);
}

/* A window with exactly `smis` SMIs in it (another SMI, the platform's
 * own, sends it round again); false when SMM_ATTEMPTS never gave one. */
static bool smm_window_with(struct pmu_event *const *evs, unsigned n, uint64_t all, uint64_t smis,
			    struct smm_window *w)
{
	for (unsigned a = 0; a < SMM_ATTEMPTS; a++) {
		smm_window(evs, n, all, smis ? SMM_APM_CNT : SMM_POST_PORT, w);
		if (w->smis == smis)
			return true;
	}
	return false;
}

/* Any LBR entry whose both ends lie outside the kernel image: a branch
 * taken in the SMM handler (nothing else runs with interrupts off). An
 * entry with one end in the image (RSM's, if recorded: the SDM does not
 * say) is not judged. */
static bool check_lbr_outside(const struct pmu_lbr_caps *l, uint64_t debugctl_on)
{
	struct pmu_lbr_snapshot s;
	uintptr_t lo = (uintptr_t)_kernel_start, hi = (uintptr_t)_kernel_end;
	unsigned bad = 0;

	if (!check(pmu_lbr_snapshot(l, &s) == 0, "reading the LBR stack faulted"))
		return false;
	for (unsigned k = 0; k < l->depth; k++) {
		struct pmu_lbr_entry e = pmu_lbr_recent(l, &s, k);
		bool from_in = e.from >= lo && e.from < hi, to_in = e.to >= lo && e.to < hi;

		if ((!e.from && !e.to) || from_in || to_in)
			continue;
		if (bad++ < 4)
			check(false,
			      "LBR entry %u (0 = newest) %#lx -> %#lx lies outside pmutest's image %#lx-%#lx: a branch of the SMM handler was recorded, though DEBUGCTL %#lx (LBR and FREEZE_WHILE_SMM) has SMI delivery clear LBR",
			      k, (unsigned long)e.from, (unsigned long)e.to, (unsigned long)lo,
			      (unsigned long)hi, (unsigned long)debugctl_on);
	}
	if (bad > 4)
		check(false, "%u LBR entries in all lie outside pmutest's image", bad);
	return bad == 0;
}

/* The fields SMI delivery clears with FREEZE_WHILE_SMM set. */
#define SMM_DEBUGCTL_TRACE \
	(BIT(DEBUGCTL_LBR_BIT) | BIT(DEBUGCTL_BTF_BIT) | BIT(DEBUGCTL_TR_BIT) | BIT(DEBUGCTL_BTS_BIT))

/* FREEZE_WHILE_SMM clear (DEBUGCTL d, none of SMM_DEBUGCTL_TRACE): the
 * least counts of SMM_TRIALS windows without and with one SMI; after
 * each SMI DEBUGCTL must read back d (nothing restores a copy, and
 * SeaBIOS's handler writes none). 0, or 1 when no window came without
 * one of the platform's own SMIs, 2 when none came with exactly ours. */
static int smm_unfrozen(struct pmu_event *const *evs, unsigned n, uint64_t all, uint64_t d, uint64_t plain[2],
			uint64_t smi[2], struct smm_window *w)
{
	bool dbg_ok = true;

	smm_debugctl_before = smm_debugctl_after = d;
	for (unsigned i = 0; i < n; i++)
		plain[i] = smi[i] = ~0ull;
	for (unsigned t = 0; t < SMM_TRIALS; t++) {
		if (!smm_window_with(evs, n, all, 0, w))
			return 1;
		for (unsigned i = 0; i < n; i++)
			plain[i] = w->count[i] < plain[i] ? w->count[i] : plain[i];
		if (!smm_window_with(evs, n, all, 1, w))
			return 2;
		for (unsigned i = 0; i < n; i++)
			smi[i] = w->count[i] < smi[i] ? w->count[i] : smi[i];
		if (dbg_ok)
			dbg_ok = check(
				w->debugctl_fault == 0 && w->debugctl == d,
				"FREEZE_WHILE_SMM clear: IA32_DEBUGCTL after RSM %#lx (fault %d), expected %#lx as written before the SMI",
				(unsigned long)w->debugctl, w->debugctl_fault, (unsigned long)d);
	}
	return 0;
}

KTEST("pmu.smm", freeze_while_smm, needs_smi, 0,
      "FREEZE_WHILE_SMM keeps a real SMI's handler out of counters and LBRs")
{
	struct pmu_cpu *pc = pmu_cpu_ensure();
	const struct pmu_caps *c = pmu_cpu_caps(pc);
	struct pmu_event gp, fx;
	struct pmu_event *evs[2] = { &gp, &fx };
	const char *what[2];
	unsigned n = 1;
	uint32_t free_gp = pmu_test_free_gp(), free_fx = pmu_test_free_fixed();
	uint64_t all = (uint64_t)c->gp_mask | (uint64_t)c->fixed_mask << 32;
	uint64_t d0 = 0, freeze = c->freeze_smm_ctl;
	struct pmu_lbr_caps lbr;
	struct pmu_lbr_regs lr = { 0 };
	char why[PMU_REASON_LEN];
	struct smm_window w;
	uint64_t plain[2] = { ~0ull, ~0ull }, smi[2] = { ~0ull, ~0ull };

	if (!free_gp)
		ktest_skip("no free GP counter");
	pmu_test_need_gp_event(PMU_ARCH_INSTRUCTIONS);
	pmu_test_event(&gp, PMU_ARCH_INSTRUCTIONS);
	if (pmu_event_add_idx(&gp, (int)__builtin_ctz(free_gp)) != PMU_OK)
		ktest_skip("instructions on GP %u: %s", __builtin_ctz(free_gp), gp.reason);
	what[0] = "the GP counter";
	if (free_fx & 1) {
		pmu_test_event(&fx, PMU_ARCH_INSTRUCTIONS);
		if (pmu_event_add_idx(&fx, PMU_IDX_FIXED(0)) == PMU_OK) {
			what[1] = "fixed counter 0";
			n = 2;
		}
	}
	if (!check(rdmsr_safe(MSR_IA32_DEBUGCTL, &d0) == 0, "reading IA32_DEBUGCTL faulted")) {
		pmu_events_del(evs, n);
		return;
	}
	pmu_lbr_decode(c, &lbr);
	if (lbr.kind == PMU_LBR_LEGACY) {
		struct pmu_lbr_filter f = { .os = true, .usr = true, .kinds = PMU_LBR_BR_ALL };
		if (pmu_lbr_encode(&lbr, &f, d0 & ~freeze, &lr, why, sizeof(why)) != PMU_OK) {
			diag("legacy LBRs, not recorded: %s", why);
			lbr.kind = PMU_LBR_NONE;
		}
	}
	diag("SMI: OUT %#x to port %#x on CPU %u (boot processor, %s); %s counting instructions (OS and USR)",
	     SMM_CMD, SMM_APM_CNT, pmu_cpu_index(pc), SMM_FIRMWARE,
	     n == 2 ? "a GP counter and fixed counter 0" : "a GP counter");

	/* 1. The control: FREEZE_WHILE_SMM clear, the handler's code (CPL 0)
	 * counts like any OS-mode code. */
	uint64_t d_clear = d0 & ~(freeze | SMM_DEBUGCTL_TRACE);
	int r = smm_unfrozen(evs, n, all, d_clear, plain, smi, &w);
	if (r) {
		wrmsr_safe(MSR_IA32_DEBUGCTL, d0);
		pmu_events_del(evs, n);
		if (r == 1)
			ktest_skip(
				"an SMI came in each of %u windows without the OUT (MSR_SMI_COUNT +%lu): the platform's own SMIs, cannot tell ours",
				SMM_ATTEMPTS, (unsigned long)w.smis);
		ktest_skip(
			"OUT %#x to port %#x: MSR_SMI_COUNT moved by %lu, not 1, in each of %u windows (APMC SMIs off?): cannot observe",
			SMM_CMD, SMM_APM_CNT, (unsigned long)w.smis, SMM_ATTEMPTS);
	}
	for (unsigned i = 0; i < n; i++)
		diag("FREEZE_WHILE_SMM clear: %s counted %lu without the SMI, %lu with it (the handler: %ld)",
		     what[i], (unsigned long)plain[i], (unsigned long)smi[i], (long)(smi[i] - plain[i]));
	/* RSM itself may count (below): more than one is the handler. */
	if (smi[0] <= plain[0] + 1) {
		wrmsr_safe(MSR_IA32_DEBUGCTL, d0);
		pmu_events_del(evs, n);
		ktest_skip(
			"with FREEZE_WHILE_SMM clear the SMI added %ld instructions (%lu, %lu without it): the SMM handler is not counted here, nothing to freeze",
			(long)(smi[0] - plain[0]), (unsigned long)smi[0], (unsigned long)plain[0]);
	}
	uint64_t handler = smi[0] - plain[0];

	/* 2-4. FREEZE_WHILE_SMM set (and LBR on, where legacy LBRs are):
	 * the handler is not counted, DEBUGCTL and GLOBAL_CTRL are back after
	 * RSM, counting goes on in the same window and in the next. */
	bool lbr_ok = true;
	uint64_t d_on = (lbr.kind == PMU_LBR_LEGACY ? lr.ctl_on : d0) | freeze;
	for (unsigned i = 0; i < n; i++)
		plain[i] = smi[i] = ~0ull;
	smm_debugctl_after = d0 | freeze;
	if (lbr.kind == PMU_LBR_LEGACY && lr.select_msr)
		pmu_hw_wrmsr(lr.select_msr, lr.select);
	for (unsigned t = 0; t < SMM_TRIALS; t++) {
		smm_debugctl_before = d_on;
		smm_lbr = lbr.kind == PMU_LBR_LEGACY ? &lbr : NULL;
		bool got = smm_window_with(evs, n, all, 1, &w);
		smm_debugctl_before = d0 | freeze;
		smm_lbr = NULL;
		if (!check(got,
			   "FREEZE_WHILE_SMM set: OUT %#x to port %#x gave no window with exactly one SMI in %u (it did with the bit clear)",
			   SMM_CMD, SMM_APM_CNT, SMM_ATTEMPTS))
			break;
		for (unsigned i = 0; i < n; i++)
			smi[i] = w.count[i] < smi[i] ? w.count[i] : smi[i];
		check(w.debugctl_fault == 0 && w.debugctl == d_on,
		      "IA32_DEBUGCTL after RSM %#lx (fault %d), expected %#lx as written before the SMI (restored at RSM)",
		      (unsigned long)w.debugctl, w.debugctl_fault, (unsigned long)d_on);
		check((w.gctl & all) == all,
		      "IA32_PERF_GLOBAL_CTRL after RSM %#lx, expected every counter's enable (%#lx) set to 1 again",
		      (unsigned long)w.gctl, (unsigned long)all);
		/* One window's records are enough to name. */
		if (lbr.kind == PMU_LBR_LEGACY && lbr_ok)
			lbr_ok = check_lbr_outside(&lbr, d_on);
		if (!smm_window_with(evs, n, all, 0, &w)) {
			check(false, "no window without an SMI in %u", SMM_ATTEMPTS);
			break;
		}
		for (unsigned i = 0; i < n; i++)
			plain[i] = w.count[i] < plain[i] ? w.count[i] : plain[i];
	}
	wrmsr_safe(MSR_IA32_DEBUGCTL, d0);
	if (lr.select_msr)
		pmu_hw_wrmsr(lr.select_msr, 0);
	for (unsigned i = 0; i < n && plain[i] != ~0ull && smi[i] != ~0ull; i++) {
		diag("FREEZE_WHILE_SMM set%s: %s counted %lu without the SMI, %lu with it",
		     lbr.kind == PMU_LBR_LEGACY ? " (and DEBUGCTL.LBR)" : "", what[i],
		     (unsigned long)plain[i], (unsigned long)smi[i]);
		check(smi[i] >= plain[i] && smi[i] <= plain[i] + 1,
		      "FREEZE_WHILE_SMM set: %s counted %lu across the SMI, expected %lu as without it (or one more: whether RSM counts the SDM does not say); %ld more, the handler counted %s",
		      what[i], (unsigned long)smi[i], (unsigned long)plain[i], (long)(smi[i] - plain[i]),
		      smi[i] > plain[i] ? "while frozen"
					: "no: counting stopped at the SMI and did not resume");
	}

	/* 5. FREEZE_WHILE_SMM clear again: the next SMI's handler counts as
	 * before; nothing of the frozen SMIs is left to restore. */
	r = smm_unfrozen(evs, n, all, d_clear, plain, smi, &w);
	if (r != 0)
		/* The platform's SMIs, not the PMU, as in the control's SKIP;
		 * what the frozen SMIs showed stands. */
		diag("FREEZE_WHILE_SMM clear again: no window with %s in %u: not judged",
		     r == 1 ? "no SMI" : "exactly one SMI", SMM_ATTEMPTS);
	else
		check(smi[0] > plain[0] + 1,
		      "FREEZE_WHILE_SMM clear again: %s counted %lu across the SMI, %lu without it; the handler (%lu before the frozen SMIs) is not counted now",
		      what[0], (unsigned long)smi[0], (unsigned long)plain[0], (unsigned long)handler);
	wrmsr_safe(MSR_IA32_DEBUGCTL, d0);
	pmu_events_del(evs, n);
}
