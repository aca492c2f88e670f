/* Host tests of the boot scan and the real-PMU probe (pmu/probe.c): the
 * precise SKIP reason on every broken or absent PMU, the exact MSR writes
 * of a probe, counters in use at boot reported and left alone, takeover. */
#include "arch/x86/msr.h"
#include "emu/model/x86-pmu.h"
#include "pmu/pmu_internal.h"
#include "tests/host/hosttest.h"
#include "tests/host/pmu_model.h"

static const struct pmu_init_opts opts = { .workload = model_tick_probe };
static const struct pmu_init_opts opts_takeover = { .takeover = true, .workload = model_tick_probe };

static void boot(enum model_profile p, bool full_width)
{
	model_init(p, full_width);
	pmu_init_all(&opts, model_run_on);
}

static void boot_cfg(const struct model_cpu_config *cfg, const struct pmu_init_opts *o)
{
	model_init_custom(cfg, 1);
	pmu_cpu_init(o);
}

static struct model_cpu_config cfg_of(enum model_profile p, bool fw)
{
	model_init(p, fw);
	return *model_config(0);
}

static char printed[8192];
static void collect(void *ctx, const char *line)
{
	(void)ctx;
	strncat(printed, line, sizeof(printed) - strlen(printed) - 2);
	strcat(printed, "\n");
}

HT_TEST(reason_no_pmu)
{
	boot(MODEL_NO_PMU, false);
	for (unsigned cpu = 0; cpu < 4; cpu++) {
		model_set_cpu(cpu);
		HT_CHECK_STR(pmu_skip_reason(), "no architectural PMU (CPUID.0AH.EAX[7:0]=0)");
	}
	HT_CHECK_EQ(model_trace_len(), 0); /* nothing written to a PMU that is not there */
}

HT_TEST(reason_ignores_writes)
{
	boot(MODEL_IGNORES_WRITES, false);
	model_set_cpu(2);
	HT_CHECK_STR(pmu_skip_reason(),
		     "counters do not count: wrote 0x2a5b3c4d to IA32_PMC0 (MSR 0xc1), read back 0x0");
}

HT_TEST(reason_rdpmc_gp)
{
	struct model_cpu_config c = cfg_of(MODEL_V4, false);
	c.rdpmc_gp = true;
	boot_cfg(&c, &opts);
	HT_CHECK_STR(pmu_skip_reason(),
		     "rdpmc raises #GP (vector 13) at CPL 0 for counter 0, which RDMSR reads fine");
	HT_CHECK(!pmu_cpu_of(0)->rdpmc_ok, "rdpmc_ok clear");
}

HT_TEST(reason_counters_hold_but_do_not_count)
{
	struct model_cpu_config c = cfg_of(MODEL_V4, false);
	c.no_count = true;
	boot_cfg(&c, &opts);
	HT_CHECK_STR(
		pmu_skip_reason(),
		"counters do not count: IA32_PMC0 programmed for instructions (PERFEVTSEL0=0x4300c0) stayed 0 over the probe workload");
	/* The default workload runs on the host CPU, which the model does not
	 * see: the probe must not pretend it counted. */
	c.no_count = false;
	boot_cfg(&c, NULL);
	HT_CHECK(pmu_skip_reason() != NULL && strstr(pmu_skip_reason(), "stayed 0") != NULL, "reason: %s",
		 pmu_skip_reason() ? pmu_skip_reason() : "(none)");
}

HT_TEST(reason_other_limits)
{
	struct model_cpu_config c = cfg_of(MODEL_V4, false);
	c.num_gp = 0;
	boot_cfg(&c, &opts);
	HT_CHECK_STR(pmu_skip_reason(), "no general-purpose counters (CPUID.0AH.EAX[15:8]=0)");
	c = cfg_of(MODEL_V4, false);
	c.ebx_unavail = 0x7f;
	boot_cfg(&c, &opts);
	HT_CHECK_STR(pmu_skip_reason(),
		     "no architectural event a GP counter can count (CPUID.0AH:EBX=0x7f, length 7)");
}

HT_TEST(counting_works_on_every_real_profile)
{
	static const enum model_profile ok[] = { MODEL_V1, MODEL_V2, MODEL_V4, MODEL_V5_GAP, MODEL_HYBRID };
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		for (int fw = 0; fw < 2; fw++) {
			boot(ok[i], fw);
			for (unsigned cpu = 0; cpu < model_ncpus(); cpu++) {
				model_set_cpu(cpu);
				const char *r = pmu_skip_reason();
				HT_CHECK(r == NULL, "%s%s cpu %u: %s", model_profile_name(ok[i]),
					 fw ? "+fw" : "", cpu, r ? r : "");
				HT_CHECK(pmu_cpu_of(cpu)->rdpmc_ok, "rdpmc works");
				HT_CHECK_EQ(pmu_cpu_of(cpu)->probe_gp, 0);
				/* Put back as found: PMC0 and its select are 0 again. */
				HT_CHECK_EQ(model_peek(cpu, MSR_IA32_PMC0), 0);
				HT_CHECK_EQ(model_peek(cpu, MSR_IA32_PERFEVTSEL0), 0);
			}
		}
}

HT_TEST(probe_write_trace_v4_full_width)
{
	char t[1024];
	model_init(MODEL_V4, true);
	pmu_cpu_init(&opts);
	model_trace_format(t, sizeof(t));
	/* GLOBAL_CTRL from its RESET value 0xf to 0 (our counters off), the
	 * pattern, zero, select instructions, enable PMC0 alone, count,
	 * disable, clear the select, restore counter and select. */
	HT_CHECK_STR(t, "0x38f<-0 0x4c1<-0x2a5b3c4d 0x4c1<-0 0x186<-0x4300c0 0x38f<-0x1 0x38f<-0 0x186<-0 "
			"0x4c1<-0 0x186<-0");
}

HT_TEST(probe_write_trace_v1)
{
	char t[1024];
	model_init(MODEL_V1, false);
	pmu_cpu_init(&opts);
	model_trace_format(t, sizeof(t));
	/* No GLOBAL_CTRL on version 1: EN alone gates the counter. */
	HT_CHECK_STR(t, "0xc1<-0x2a5b3c4d 0xc1<-0 0x186<-0x4300c0 0x186<-0 0xc1<-0 0x186<-0");
}

HT_TEST(probe_uses_cycles_when_instructions_unavailable)
{
	struct model_cpu_config c = cfg_of(MODEL_V2, false);
	char t[1024];
	c.ebx_unavail = 1u << 1;
	model_init_custom(&c, 1);
	pmu_cpu_init(&opts);
	HT_CHECK(pmu_skip_reason() == NULL, "counts: %s", pmu_skip_reason() ? pmu_skip_reason() : "");
	model_trace_format(t, sizeof(t));
	HT_CHECK(strstr(t, "0x186<-0x43003c") != NULL, "cycles selected: %s", t);
}

/* Version 4 without IA32_PERF_GLOBAL_INUSE (a hypervisor's): the read
 * faults, INUSE is taken as absent and reported, and the counters still
 * count (hardware-truth review F20). */
HT_TEST(inuse_fault_is_no_inuse)
{
	struct model_cpu_config cfg = *(model_init(MODEL_V4, true), model_config(0));
	cfg.quirks = X86PMU_QUIRK_NO_INUSE_MSR;
	cfg.hypervisor = true;
	model_init_custom(&cfg, 1);
	pmu_cpu_init(&(struct pmu_init_opts){ .workload = model_tick_probe });
	struct pmu_cpu *pc = pmu_cpu_of(0);
	HT_CHECK(pc->counting, "counters count: %s", pc->reason);
	HT_CHECK_EQ(pc->inuse.read_fault, 0);
	HT_CHECK_EQ(pc->inuse.global_inuse_fault, X86_VEC_GP);
	HT_CHECK(!pc->inuse.global_inuse_valid, "no INUSE value");
	HT_CHECK(pmu_inuse_found(pc), "the fault is worth reporting");
	printed[0] = '\0';
	pmu_inuse_report(pc, collect, NULL);
	HT_CHECK(strstr(printed, "IA32_PERF_GLOBAL_INUSE (MSR 0x392) raised #GP") != NULL, "reported in:\n%s",
		 printed);
}

HT_TEST(inuse_reported_and_left_alone)
{
	model_init(MODEL_V4, false);
	/* Firmware left PMC1 counting cycles and FIXED_CTR1 on, NMI-watchdog
	 * style, plus PMC2 claimed (event code, EN clear: INUSE on v4). */
	model_poke(0, MSR_IA32_PERFEVTSEL0 + 1, 0x53003c);
	model_poke(0, MSR_IA32_PERFEVTSEL0 + 2, 0x3c);
	model_poke(0, MSR_IA32_FIXED_CTR_CTRL, 0x30);
	model_poke(0, MSR_IA32_PERF_GLOBAL_CTRL, 0x20000000full);
	pmu_cpu_init(&opts);
	const struct pmu_cpu *pc = pmu_cpu_of(0);
	HT_CHECK_EQ(pc->inuse.gp, 0x6);
	HT_CHECK_EQ(pc->inuse.fixed, 0x2);
	HT_CHECK_EQ(pc->gp_reserved, 0x6);
	HT_CHECK_EQ(pc->fixed_reserved, 0x2);
	HT_CHECK(pmu_skip_reason() == NULL, "counting works beside them");
	/* Left alone: their registers are as firmware set them, and only the
	 * free counters' GLOBAL_CTRL bits were cleared. */
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERFEVTSEL0 + 1), 0x53003c);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_FIXED_CTR_CTRL), 0x30);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_CTRL), 0x200000006ull);
	printed[0] = '\0';
	pmu_inuse_report(pc, collect, NULL);
	HT_CHECK_STR(
		printed,
		"cpu 0: IA32_PERFEVTSEL1 (MSR 0x187) = 0x53003c: PMC1 enabled (event 0x3c umask 0x00) by an earlier owner; left alone\n"
		"cpu 0: IA32_PERFEVTSEL2 (MSR 0x188) = 0x3c: PMC2 claimed (INUSE) (event 0x3c umask 0x00) by an earlier owner; left alone\n"
		"cpu 0: IA32_FIXED_CTR_CTRL (MSR 0x38d) = 0x30: FIXED_CTR1 enabled (field 0x3) by an earlier owner; left alone\n"
		"cpu 0: IA32_PERF_GLOBAL_CTRL (MSR 0x38f) = 0x20000000f at boot, RESET value is 0xf\n"
		"cpu 0: IA32_PERF_GLOBAL_INUSE (MSR 0x392) = 0x8000000200000006 at boot\n");
	/* Allocation keeps off them: FIXED_CTR1 (cycles' own) is taken, so
	 * cycles lands on PMC0 and the next GP event on PMC3. */
	struct pmu_event_attr a;
	struct pmu_event ev1, ev2;
	pmu_attr_arch(&a, PMU_ARCH_CYCLES);
	pmu_event_init(&ev1, &a, "cycles");
	pmu_event_init(&ev2, &a, "cycles2");
	HT_CHECK_EQ(pmu_event_add(&ev1), PMU_OK);
	HT_CHECK_EQ(pmu_event_add(&ev2), PMU_OK);
	HT_CHECK_EQ(ev1.hw.idx, 0);
	HT_CHECK_EQ(ev2.hw.idx, 3);
	pmu_event_del(&ev1);
	pmu_event_del(&ev2);
}

HT_TEST(all_gp_in_use_skips_with_reason)
{
	model_init(MODEL_V2, false);
	model_poke(0, MSR_IA32_PERFEVTSEL0, 0x43003c);
	model_poke(0, MSR_IA32_PERFEVTSEL0 + 1, 0x4300c0);
	pmu_cpu_init(&opts);
	HT_CHECK_STR(
		pmu_skip_reason(),
		"all GP counters (mask 0x3) are in use by an earlier owner; boot with pmu.takeover=1 to take them");
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERFEVTSEL0), 0x43003c);
}

HT_TEST(takeover_clears_and_reports)
{
	model_init(MODEL_V2, false);
	model_poke(0, MSR_IA32_PERFEVTSEL0, 0x43003c);
	model_poke(0, MSR_IA32_PERFEVTSEL0 + 1, 0x4300c0);
	model_poke(0, MSR_IA32_FIXED_CTR_CTRL, 0xb00);
	model_poke(0, MSR_IA32_PERF_GLOBAL_CTRL, 0x400000003ull);
	pmu_cpu_init(&opts_takeover);
	const struct pmu_cpu *pc = pmu_cpu_of(0);
	HT_CHECK(pc->inuse.taken_over, "taken over");
	HT_CHECK(pmu_skip_reason() == NULL, "counts after takeover");
	HT_CHECK_EQ(pc->gp_reserved, 0);
	HT_CHECK_EQ(pc->fixed_reserved, 0);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERFEVTSEL0 + 1), 0);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_FIXED_CTR_CTRL), 0);
	HT_CHECK_EQ(model_peek(0, MSR_IA32_PERF_GLOBAL_CTRL), 0);
	printed[0] = '\0';
	pmu_inuse_report(pc, collect, NULL);
	HT_CHECK(
		strstr(printed,
		       "IA32_PERFEVTSEL0 (MSR 0x186) = 0x43003c: PMC0 enabled (event 0x3c umask 0x00) by an earlier owner; taken over (pmu.takeover=1)") !=
			NULL,
		"report:\n%s", printed);
	HT_CHECK(strstr(printed, "FIXED_CTR2 enabled (field 0xb)") != NULL, "report:\n%s", printed);
}

HT_TEST(nothing_in_use_report)
{
	boot(MODEL_V4, false);
	printed[0] = '\0';
	pmu_inuse_report(pmu_cpu_of(3), collect, NULL);
	HT_CHECK_STR(printed, "cpu 3: no counter in use at boot\n");
	HT_CHECK(!pmu_inuse_found(pmu_cpu_of(3)), "nothing found");
}

HT_TEST(uninitialised_cpu_reason)
{
	boot(MODEL_V4, false);
	pmu_cpu_of(1)->initialised = false;
	model_set_cpu(1);
	HT_CHECK_STR(pmu_skip_reason(), "PMU driver not initialised on this CPU (pmu_cpu_init not run)");
	model_set_cpu(0);
}

HT_MAIN("pmu_probe")
