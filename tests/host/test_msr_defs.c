/* Host test: arch/x86/msr.h's PMU register numbers and bit definitions
 * against a table transcribed separately from the SDM (vol. 4 table 2-2
 * "IA-32 Architectural MSRs", vol. 3B "Performance Monitoring"), so a typo
 * in the header cannot go unnoticed. */
#include <stdint.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/msr.h"
#include "tests/host/hosttest.h"

struct def {
	const char *name;
	unsigned long long have, sdm;
};

#define D(name, sdm)                                     \
	{                                                \
#name, (unsigned long long)(name), (sdm) \
	}

/* Addresses, typed in from the SDM's MSR table, not from msr.h. */
static const struct def addrs[] = {
	D(MSR_IA32_PMC0, 0xc1),
	D(MSR_IA32_PERFEVTSEL0, 0x186),
	D(MSR_IA32_A_PMC0, 0x4c1),
	D(MSR_IA32_FIXED_CTR0, 0x309),
	D(MSR_IA32_PERF_CAPABILITIES, 0x345),
	D(MSR_IA32_FIXED_CTR_CTRL, 0x38d),
	D(MSR_IA32_PERF_GLOBAL_STATUS, 0x38e),
	D(MSR_IA32_PERF_GLOBAL_CTRL, 0x38f),
	D(MSR_IA32_PERF_GLOBAL_OVF_CTRL, 0x390),
	D(MSR_IA32_PERF_GLOBAL_STATUS_RESET, 0x390),
	D(MSR_IA32_PERF_GLOBAL_STATUS_SET, 0x391),
	D(MSR_IA32_PERF_GLOBAL_INUSE, 0x392),
	D(MSR_IA32_DEBUGCTL, 0x1d9),
	D(MSR_SMI_COUNT, 0x34),
	D(MSR_OFFCORE_RSP_0, 0x1a6),
	D(MSR_OFFCORE_RSP_1, 0x1a7),
	D(MSR_IA32_PMC_V6_GP0_CTR, 0x1900),
	D(MSR_IA32_PMC_V6_GP0_CFG_A, 0x1901),
	D(MSR_IA32_PMC_V6_FX0_CTR, 0x1980),
	D(MSR_IA32_PMC_V6_STEP, 4),
	/* AMD, APM vol. 2 "Performance Monitoring Counters". */
	D(MSR_K7_EVNTSEL0, 0xc0010000),
	D(MSR_K7_PERFCTR0, 0xc0010004),
	D(MSR_F15H_PERF_CTL0, 0xc0010200),
	D(MSR_F15H_PERF_CTR0, 0xc0010201),
	D(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS, 0xc0000300),
	D(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, 0xc0000301),
	D(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, 0xc0000302),
};

/* IA32_PERFEVTSELx layout: [7:0] event, [15:8] umask, 16 USR, 17 OS, 18 E,
 * 19 PC, 20 INT, 21 AnyThread, 22 EN, 23 INV, [31:24] CMASK; TSX 32/33. */
static const struct def evtsel[] = {
	D(PERFEVTSEL_EVENT_SHIFT, 0),  D(PERFEVTSEL_EVENT_MASK, 0xff),
	D(PERFEVTSEL_UMASK_SHIFT, 8),  D(PERFEVTSEL_UMASK_MASK, 0xff00),
	D(PERFEVTSEL_USR_BIT, 16),     D(PERFEVTSEL_OS_BIT, 17),
	D(PERFEVTSEL_EDGE_BIT, 18),    D(PERFEVTSEL_PC_BIT, 19),
	D(PERFEVTSEL_INT_BIT, 20),     D(PERFEVTSEL_ANY_BIT, 21),
	D(PERFEVTSEL_EN_BIT, 22),      D(PERFEVTSEL_INV_BIT, 23),
	D(PERFEVTSEL_CMASK_SHIFT, 24), D(PERFEVTSEL_CMASK_MASK, 0xff000000),
	D(PERFEVTSEL_IN_TX_BIT, 32),   D(PERFEVTSEL_IN_TXCP_BIT, 33),
};

/* FIXED_CTR_CTRL: 4 bits per counter: 0 ring 0, 1 ring > 0, 2 AnyThread,
 * 3 PMI. GLOBAL_*: fixed i at bit 32 + i; STATUS 58 LBR_Frz, 59 CTR_Frz,
 * 60 ASCI, 61 Ovf_Uncore, 62 OvfBuf, 63 CondChgd; INUSE 63 PMI. DEBUGCTL
 * 0 LBR, 1 BTF, 11 FREEZE_LBRS_ON_PMI, 12 FREEZE_PERFMON_ON_PMI, 14
 * FREEZE_WHILE_SMM. PERF_CAPABILITIES [5:0] LBR fmt, 6 PEBS trap, 7 PEBS
 * arch regs, [11:8] PEBS fmt, 12 SMM freeze, 13 full-width write, 14 PEBS
 * baseline, 15 perf metrics. CPUID.01H:ECX[15] PDCM, CPUID.07H:EDX[15]
 * hybrid. */
static const struct def bits[] = {
	D(FIXED_CTR_CTRL_FIELD_WIDTH, 4),
	D(FIXED_CTR_CTRL_SHIFT(0), 0),
	D(FIXED_CTR_CTRL_SHIFT(3), 12),
	D(FIXED_CTR_CTRL_OS_BIT, 0),
	D(FIXED_CTR_CTRL_USR_BIT, 1),
	D(FIXED_CTR_CTRL_ANY_BIT, 2),
	D(FIXED_CTR_CTRL_PMI_BIT, 3),
	D(FIXED_CTR_CTRL_FIELD_MASK, 0xf),
	D(FIXED_CTR_CTRL_EN_MASK, 0x3),
	D(PERF_GLOBAL_FIXED_SHIFT, 32),
	D(PERF_GLOBAL_STATUS_TRACE_TOPA_PMI_BIT, 55),
	D(PERF_GLOBAL_STATUS_LBR_FRZ_BIT, 58),
	D(PERF_GLOBAL_STATUS_CTR_FRZ_BIT, 59),
	D(PERF_GLOBAL_STATUS_ASCI_BIT, 60),
	D(PERF_GLOBAL_STATUS_OVF_UNCORE_BIT, 61),
	D(PERF_GLOBAL_STATUS_OVF_BUF_BIT, 62),
	D(PERF_GLOBAL_STATUS_COND_CHGD_BIT, 63),
	D(PERF_GLOBAL_INUSE_PMI_BIT, 63),
	D(DEBUGCTL_LBR_BIT, 0),
	D(DEBUGCTL_BTF_BIT, 1),
	D(DEBUGCTL_FREEZE_LBRS_ON_PMI_BIT, 11),
	D(DEBUGCTL_FREEZE_PERFMON_ON_PMI_BIT, 12),
	D(DEBUGCTL_FREEZE_WHILE_SMM_BIT, 14),
	D(PERF_CAP_LBR_FMT_MASK, 0x3f),
	D(PERF_CAP_PEBS_TRAP_BIT, 6),
	D(PERF_CAP_PEBS_ARCH_REG_BIT, 7),
	D(PERF_CAP_PEBS_FMT_SHIFT, 8),
	D(PERF_CAP_PEBS_FMT_MASK, 0xf00),
	D(PERF_CAP_FREEZE_SMM_BIT, 12),
	D(PERF_CAP_FW_WRITE_BIT, 13),
	D(PERF_CAP_PEBS_BASELINE_BIT, 14),
	D(PERF_CAP_PERF_METRICS_BIT, 15),
	D(CPUID_1_ECX_PDCM_BIT, 15),
	D(CPUID_7_EDX_HYBRID_BIT, 15),
};

/* Uncore, package scope: the client MSRs from the SDM vol. 4 tables of
 * the 2nd to 10th generation Core processors and, for the later ones and
 * the servers, from Linux arch/x86/events/intel/uncore_snb.c and
 * uncore_snbep.c (#defines of the same names) and Intel's PCM
 * src/cpucounters.cpp (the CHA counts). */
static const struct def uncore[] = {
	D(MSR_UNC_PERF_GLOBAL_CTRL, 0x391),
	D(MSR_SKL_UNC_PERF_GLOBAL_CTL, 0xe01),
	D(MSR_UNC_CBO_CONFIG, 0x396),
	D(MSR_UNC_CBO_0_PERFEVTSEL0, 0x700),
	D(MSR_UNC_CBO_0_PERFCTR0, 0x706),
	D(MSR_UNC_CBO_STRIDE, 0x10),
	D(MSR_UNC_ARB_PERFCTR0, 0x3b0),
	D(MSR_UNC_ARB_PERFEVTSEL0, 0x3b2),
	D(MSR_ICL_UNC_CBO_0_PER_CTR0, 0x702),
	D(MSR_ICL_UNC_CBO_STRIDE, 0x8),
	D(MSR_ADL_UNC_CBO_0_PERFEVTSEL0, 0x2000),
	D(MSR_ADL_UNC_CBO_0_PER_CTR0, 0x2002),
	D(MSR_ADL_UNC_CBO_STRIDE, 0x8),
	D(MSR_ADL_UNC_ARB_PERFEVTSEL0, 0x2fd0),
	D(MSR_ADL_UNC_ARB_PER_CTR0, 0x2fd2),
	D(MSR_ADL_UNC_ARB_STRIDE, 0x8),
	D(MSR_ADL_UNC_PERF_GLOBAL_CTL, 0x2ff0),
	D(MSR_MTL_UNC_SNCU_BOX_CTL, 0x200e),
	D(MSR_MTL_UNC_ARB_CTRL, 0x2412),
	D(MSR_MTL_UNC_CNCU_BOX_CTL, 0x240e),
	D(MSR_MTL_UNC_CBO_0_PERFEVTSEL0, 0x2442),
	D(MSR_MTL_UNC_CBO_0_PER_CTR0, 0x2448),
	D(MSR_MTL_UNC_STRIDE, 0x10),
	D(MSR_SKX_C0_PMON_BOX_CTL, 0xe00),
	D(MSR_SKX_CHA_STRIDE, 0x10),
	D(MSR_SKX_NCU_PMON_CONFIG, 0x702),
	D(MSR_SPR_C0_PMON_BOX_CTL, 0x2000),
	D(MSR_SPR_CHA_STRIDE, 0x10),
	D(MSR_SPR_UNC_PMON_GLOBAL_CTL, 0x2ff0),
	D(MSR_SPR_UNC_CBO_CONFIG, 0x2ffe),
	D(MSR_GNR_PMON_NUMBER_CBOS, 0x3fed),
};

static void check_table(const struct def *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		HT_CHECK(t[i].have == t[i].sdm, "%s is %#llx in msr.h, the SDM says %#llx", t[i].name,
			 t[i].have, t[i].sdm);
}

#define CHECK_TABLE(t) check_table(t, sizeof(t) / sizeof(t[0]))

HT_TEST(msr_addresses)
{
	CHECK_TABLE(addrs);
}

HT_TEST(uncore_msr_addresses)
{
	CHECK_TABLE(uncore);
}

HT_TEST(perfevtsel_layout)
{
	CHECK_TABLE(evtsel);
	/* The fields tile bits 31:0 with no overlap. */
	unsigned long long all = PERFEVTSEL_EVENT_MASK | PERFEVTSEL_UMASK_MASK | PERFEVTSEL_CMASK_MASK;
	for (unsigned b = PERFEVTSEL_USR_BIT; b <= PERFEVTSEL_INV_BIT; b++)
		all |= 1ull << b;
	HT_CHECK_EQ(all, 0xffffffffull);
	/* An event select as Linux writes "instructions, usr+os, enabled". */
	unsigned long long sel = 0xc0 | 1ull << PERFEVTSEL_USR_BIT | 1ull << PERFEVTSEL_OS_BIT |
				 1ull << PERFEVTSEL_EN_BIT;
	HT_CHECK_EQ(sel, 0x4300c0);
}

HT_TEST(fixed_global_debugctl_perfcaps_bits)
{
	CHECK_TABLE(bits);
	/* FIXED_CTR2 enabled for all rings with PMI: 0xb in field 2. */
	HT_CHECK_EQ((FIXED_CTR_CTRL_EN_MASK | 1ull << FIXED_CTR_CTRL_PMI_BIT) << FIXED_CTR_CTRL_SHIFT(2),
		    0xb00);
}

/* Version 6, CPUID.23H, top-down metrics, AMD's newer registers and the
 * peer checks' MSRs, typed in from their sources (Linux msr-index.h and
 * perf_event.h at the commits msr.h names; SDM vol. 4 table 2-2 at 49H;
 * APM vol. 3 CPUID Fn8000_0001/0008/0022): GP n CTR/CFG_A/CFG_B/CFG_C at
 * 0x1900-0x1903 + 4n, fixed m CTR/CFG_B/CFG_C at 0x1980/0x1982/0x1983 +
 * 4m; PERF_METRICS 0x329, RDPMC index 0x20000000, GLOBAL_CTRL bit 48;
 * IA32_PRED_CMD 0x49 bit 0; PERFEVTSEL EQ 36, user disable 37, UMASK2
 * 47:40; FIXED_CTR_CTRL user disable 33 + 4i; AMD GuestOnly 40, HostOnly
 * 41, StatusSet 0xC0000303, LbrFreeze 58; CPUID 07H.1 EAX[8], 23H
 * sub-leaves 1-5 and EBX 0-2, 07H EDX[26] and EBX[11], 80000008H EBX[12],
 * 80000001H ECX[2], 80000022H EAX[2]. */
static const struct def newest[] = {
	D(MSR_IA32_PMC_V6_GP0_CFG_B, 0x1902),
	D(MSR_IA32_PMC_V6_GP0_CFG_C, 0x1903),
	D(MSR_IA32_PMC_V6_FX0_CFG_B, 0x1982),
	D(MSR_IA32_PMC_V6_FX0_CFG_C, 0x1983),
	D(MSR_PERF_METRICS, 0x329),
	D(PERF_METRICS_RDPMC_INDEX, 0x20000000),
	D(PERF_GLOBAL_CTRL_PERF_METRICS_BIT, 48),
	D(MSR_IA32_PRED_CMD, 0x49),
	D(PRED_CMD_IBPB_BIT, 0),
	D(PERFEVTSEL_EQ_BIT, 36),
	D(PERFEVTSEL_RDPMC_USER_DISABLE_BIT, 37),
	D(PERFEVTSEL_UMASK2_SHIFT, 40),
	D(PERFEVTSEL_UMASK2_MASK, 0xff0000000000ull),
	D(FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(0), 33),
	D(FIXED_CTR_CTRL_RDPMC_USER_DISABLE_BIT(3), 45),
	D(AMD_PERFEVTSEL_GUEST_ONLY_BIT, 40),
	D(AMD_PERFEVTSEL_HOST_ONLY_BIT, 41),
	D(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_SET, 0xc0000303),
	D(AMD_PERF_GLOBAL_STATUS_LBR_FREEZE_BIT, 58),
	D(CPUID_7_1_EAX_ARCH_PERFMON_EXT_BIT, 8),
	D(CPUID_23_LEAF, 0x23),
	D(CPUID_23_COUNTERS_SUBLEAF, 1),
	D(CPUID_23_ACR_SUBLEAF, 2),
	D(CPUID_23_EVENTS_SUBLEAF, 3),
	D(CPUID_23_PEBS_CAPS_SUBLEAF, 4),
	D(CPUID_23_PEBS_COUNTERS_SUBLEAF, 5),
	D(CPUID_23_EBX_UMASK2_BIT, 0),
	D(CPUID_23_EBX_EQ_BIT, 1),
	D(CPUID_23_EBX_RDPMC_USER_DISABLE_BIT, 2),
	D(CPUID_7_EDX_SPEC_CTRL_BIT, 26),
	D(CPUID_7_EBX_RTM_BIT, 11),
	D(CPUID_80000008_EBX_IBPB_BIT, 12),
	D(CPUID_80000001_ECX_SVM_BIT, 2),
	D(CPUID_80000022_EAX_LBR_PMC_FREEZE_BIT, 2),
};

HT_TEST(newest_pmus_and_peer_checks)
{
	CHECK_TABLE(newest);
	/* The v6 registers of GP 9 and fixed 6 (Lion Cove's last GP, Skymont's
	 * last fixed counter). */
	HT_CHECK_EQ(MSR_IA32_PMC_V6_GP0_CTR + 9 * MSR_IA32_PMC_V6_STEP, 0x1924);
	HT_CHECK_EQ(MSR_IA32_PMC_V6_FX0_CFG_B + 6 * MSR_IA32_PMC_V6_STEP, 0x199a);
}

HT_MAIN("msr_defs")
