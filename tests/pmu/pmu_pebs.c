/* PEBS on each CPU: a GP counter counting retired branches with PEBS on,
 * through a crafted path whose every block is one LEA that counts in RAX
 * and one two-byte JMP, with every other register holding a known value.
 * The records must be one per overflow with the counter reloaded, point
 * at the path's JMPs, carry the registers the path holds, fill the DS
 * buffer to its threshold before the buffer PMI, follow MSR_PEBS_DATA_CFG
 * (adaptive PEBS), and hold no LBR entry the test did not make. */
#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/timer.h"
#include "lib/bits.h"
#include "lib/string.h"
#include "pmu/intel/caps.h"
#include "pmu/intel/pebs.h"
#include "pmu/lbr.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/*
 * pebs_path(msr, on, off): WRMSR(msr, on); load the known values; then
 * PEBS_BLOCKS blocks of
 *     lea 1(%rax), %rax      4 bytes, RAX counts the blocks, flags kept
 *     jmp 1f; 1:             2 bytes, the block's only branch
 * from pebs_path_start; then WRMSR(msr, off). The only branches between
 * the WRMSRs are the JMPs, so a counter of retired branches preset to -P
 * overflows on the JMP of block P - 1, and at any instruction boundary
 * in the path RAX and RIP agree: RAX = k at block k's LEA, k + 1 at its
 * JMP. The other registers hold PEBS_GPR(n) for register number n; RSP
 * and RFLAGS are saved to pebs_ctl before the first block.
 */
#define PEBS_BLOCKS 256
#define PEBS_BLOCK_BYTES 6
#define PEBS_LEA_BYTES 4
#define PEBS_GPR(n) (0xa5a5000000000000ull | (uint64_t)(n) << 8 | (uint64_t)(n))
void pebs_path(uint32_t msr, uint64_t on, uint64_t off);
extern const char pebs_path_start[], pebs_path_end[];
struct pebs_ctl {
	uint32_t msr, pad;
	uint64_t off, rsp, rflags;
};
struct pebs_ctl pebs_ctl;

/* The known values are PEBS_GPR(n) written out: 0xa5a5000000000b0b is R11's. */
__asm__(".pushsection .text\n"
	".globl pebs_path\n"
	".type pebs_path, @function\n"
	"pebs_path:\n\t"
	"push %rbx\n\tpush %rbp\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"
	"mov %edi, pebs_ctl(%rip)\n\t"
	"mov %rdx, pebs_ctl+8(%rip)\n\t"
	"mov %rsp, pebs_ctl+16(%rip)\n\t"
	"mov %edi, %ecx\n\t"
	"mov %esi, %eax\n\t"
	"shr $32, %rsi\n\t"
	"mov %esi, %edx\n\t"
	"movabs $0xa5a5000000000303, %rbx\n\t"
	"movabs $0xa5a5000000000505, %rbp\n\t"
	"movabs $0xa5a5000000000606, %rsi\n\t"
	"movabs $0xa5a5000000000707, %rdi\n\t"
	"movabs $0xa5a5000000000808, %r8\n\t"
	"movabs $0xa5a5000000000909, %r9\n\t"
	"movabs $0xa5a5000000000a0a, %r10\n\t"
	"movabs $0xa5a5000000000b0b, %r11\n\t"
	"movabs $0xa5a5000000000c0c, %r12\n\t"
	"movabs $0xa5a5000000000d0d, %r13\n\t"
	"movabs $0xa5a5000000000e0e, %r14\n\t"
	"movabs $0xa5a5000000000f0f, %r15\n\t"
	"wrmsr\n\t"
	"movabs $0xa5a5000000000101, %rcx\n\t"
	"movabs $0xa5a5000000000202, %rdx\n\t"
	"xor %eax, %eax\n\t"
	"pushfq\n\t"
	"popq pebs_ctl+24(%rip)\n"
	".globl pebs_path_start\npebs_path_start:\n\t"
	".rept 256\n\t"
	".byte 0x48, 0x8d, 0x40, 0x01\n\t" /* lea 1(%rax), %rax, 4 bytes whatever the assembler */
	".byte 0xeb, 0x00\n\t"             /* jmp to the next instruction */
	".endr\n"
	".globl pebs_path_end\npebs_path_end:\n\t"
	"mov pebs_ctl(%rip), %ecx\n\t"
	"mov pebs_ctl+8(%rip), %eax\n\t"
	"mov pebs_ctl+12(%rip), %edx\n\t"
	"wrmsr\n\t"
	"pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbp\n\tpop %rbx\n\t"
	"ret\n"
	".size pebs_path, . - pebs_path\n"
	".popsection\n");
_Static_assert(PEBS_BLOCKS == 256, "the .rept count above");

/* The DS save area and the PEBS buffer (64-bit linear addresses). */
#define PEBS_BUF_SIZE (16 * 1024)
static struct pmu_ds_area ds __attribute__((aligned(64)));
static uint8_t pebs_buf[PEBS_BUF_SIZE] __attribute__((aligned(4096)));

static struct pmu_pebs_caps pebs_of[PMU_MAX_CPUS];

static struct pmu_pebs_caps *pebs_here(void)
{
	return &pebs_of[pmu_hw_cpu() % PMU_MAX_CPUS];
}

/* PEBS present, a free GP counter that may use it, the branches event. */
static const char *needs_pebs(void)
{
	const char *why = pmu_needs_global_ctrl();
	struct pmu_pebs_caps *p;
	uint64_t free;

	if (why)
		return why;
	p = pebs_here();
	pmu_pebs_decode(pmu_caps(), p);
	if (!p->present)
		return ktest_reason("%s", p->why);
	if ((why = pmu_test_gp_event_missing(PMU_ARCH_BRANCHES)))
		return why;
	free = p->counters & pmu_test_free_gp();
	if (!free)
		return ktest_reason("no free GP counter that can use PEBS (PEBS counters %#lx, free %#x)",
				    (unsigned long)p->counters, pmu_test_free_gp());
	return NULL;
}

static const char *needs_adaptive(void)
{
	const char *why = needs_pebs();

	if (why)
		return why;
	if (!pebs_here()->adaptive)
		return ktest_reason("PEBS format %u without adaptive PEBS (IA32_PERF_CAPABILITIES[14]=%u)",
				    pebs_here()->format, intel_caps(pmu_caps())->pebs_baseline);
	return NULL;
}

static const char *needs_pebs_pmi(void)
{
	const char *why = needs_pebs();

	return why ? why : pmu_needs_pmi();
}

/* One run of the path with PEBS on counter ev (which holds a GP counter). */
struct pebs_run {
	uint64_t period;                /* reset and preset: -period */
	bool adaptive;                  /* the counter's adaptive bit (PERFEVTSEL[34]) */
	uint64_t data_cfg;              /* MSR_PEBS_DATA_CFG (adaptive PEBS) */
	unsigned thresh_rec;            /* interrupt threshold after this many records; 0: none */
	const struct pmu_lbr_regs *lbr; /* LBRs on around the path; NULL: left as they are */
	/* Results. */
	unsigned size;    /* the record size expected */
	uint64_t index;   /* DS PEBS index after the run */
	uint64_t counter; /* the counter after the run */
	uint64_t status;  /* GLOBAL_STATUS after the run, before clearing */
	uint64_t tsc[2];  /* the TSC right before and right after the path */
};

/* Program PEBS on ev's counter (INT clear, as Linux ds.c and
 * kvm-unit-tests do), run the path with GLOBAL_CTRL as the bracket, tear
 * down. False after a failed check. */
static bool pebs_run(struct pmu_event *ev, struct pebs_run *r)
{
	const struct pmu_caps *c = pmu_caps();
	const struct pmu_pebs_caps *p = pebs_here();
	int x = ev->hw.idx;
	uint64_t mask = pmu_width_mask(ev->hw.width), start = (0 - r->period) & mask, *slot, global = 0;
	uint64_t sel = ev->hw.config | BIT(PERFEVTSEL_EN_BIT) |
		       (r->adaptive ? BIT(PERFEVTSEL_ADAPTIVE_BIT) : 0);
	/* A fixed counter: its IA32_FIXED_CTR_CTRL field (ring 0, no PMI)
	 * and its adaptive bit 32 + 4i instead of an event select. */
	bool fixed = PMU_IDX_IS_FIXED(x);
	unsigned fi = fixed ? (unsigned)(x - PMU_IDX_FIXED_BASE) : 0;
	uint32_t sel_msr = fixed ? MSR_IA32_FIXED_CTR_CTRL : pmu_evtsel_msr(c, (unsigned)x);
	uint64_t sel_off = 0;
	int f = 0;
	bool was;

	if (fixed) {
		pmu_hw_rdmsr(MSR_IA32_FIXED_CTR_CTRL, &sel_off);
		sel_off &= ~((uint64_t)FIXED_CTR_CTRL_FIELD_MASK << FIXED_CTR_CTRL_SHIFT(fi)) &
			   ~BIT(FIXED_CTR_CTRL_ADAPTIVE_BIT(fi));
		sel = sel_off | BIT(FIXED_CTR_CTRL_SHIFT(fi) + FIXED_CTR_CTRL_OS_BIT) |
		      (r->adaptive ? BIT(FIXED_CTR_CTRL_ADAPTIVE_BIT(fi)) : 0);
	}

	r->size = pmu_pebs_record_size(p, r->adaptive, r->data_cfg);
	if (!check(r->size && r->size <= PEBS_BUF_SIZE, "PEBS format %u, DATA_CFG %#lx: record size %u bytes",
		   p->format, (unsigned long)r->data_cfg, r->size))
		return false;
	memset(&ds, 0, sizeof(ds));
	memset(pebs_buf, 0, sizeof(pebs_buf));
	ds.pebs_base = ds.pebs_index = (uint64_t)pebs_buf;
	ds.pebs_max = (uint64_t)pebs_buf + PEBS_BUF_SIZE / r->size * r->size;
	ds.pebs_threshold = r->thresh_rec ? ds.pebs_base + (uint64_t)r->thresh_rec * r->size
					  : ds.pebs_max + 1;
	slot = pmu_pebs_reset_slot(p, &ds, x);
	if (!check(slot != NULL, "no DS reset slot for counter %d", x))
		return false;
	*slot = start;
	if (!check(pmu_event_write_counter(ev, start) == PMU_OK, "presetting %s to -%lu: %s", ev->name,
		   (unsigned long)r->period, ev->reason))
		return false;
	/* Nothing counts until the path's first WRMSR. */
	pmu_hw_rdmsr(c->global_ctrl, &global);
	pmu_hw_wrmsr(c->global_ctrl, 0);
	f |= pmu_hw_wrmsr(sel_msr, sel);
	f |= pmu_hw_wrmsr(MSR_IA32_DS_AREA, (uint64_t)&ds);
	if (p->adaptive)
		f |= pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, r->data_cfg);
	f |= pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, pmu_idx_bit(x));
	if (r->lbr) {
		if (r->lbr->select_msr)
			f |= pmu_hw_wrmsr(r->lbr->select_msr, r->lbr->select);
		f |= pmu_hw_wrmsr(r->lbr->ctl_msr, r->lbr->ctl_on);
	}
	if (!check(f == 0, "programming PEBS faulted: %s%d <- %#lx, DS_AREA, DATA_CFG <- %#lx, PEBS_ENABLE%s",
		   fixed ? "FIXED_CTR_CTRL for fixed " : "PERFEVTSEL", fixed ? (int)fi : x, sel, r->data_cfg,
		   r->lbr ? ", the LBR enable" : "")) {
		if (r->lbr)
			pmu_hw_wrmsr(r->lbr->ctl_msr, r->lbr->ctl_off);
		pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		pmu_hw_wrmsr(sel_msr, sel_off);
		pmu_hw_wrmsr(c->global_ctrl, global);
		return false;
	}
	was = irq_save();
	r->tsc[0] = rdtsc();
	pebs_path(c->global_ctrl, pmu_idx_bit(x), 0);
	r->tsc[1] = rdtsc();
	irq_restore(was);
	if (r->lbr)
		pmu_hw_wrmsr(r->lbr->ctl_msr, r->lbr->ctl_off);
	/* Disable in kvm-unit-tests' order: PEBS_ENABLE first. */
	pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	pmu_hw_rdmsr(fixed ? pmu_fixed_msr(c, fi) : pmu_ctr_msr(c, (unsigned)x), &r->counter);
	pmu_hw_wrmsr(sel_msr, sel_off);
	if (p->adaptive)
		pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, 0);
	pmu_hw_wrmsr(MSR_IA32_DS_AREA, 0);
	pmu_hw_rdmsr(c->global_status, &r->status);
	pmu_hw_wrmsr(c->global_ctrl, global);
	r->index = ds.pebs_index;
	return true;
}

/* Reserve a free PEBS-capable GP counter for the branches event. */
static bool pebs_event(struct pmu_event *ev)
{
	uint64_t free = pebs_here()->counters & pmu_test_free_gp();
	unsigned x = pmu_test_first_absent(~(uint32_t)free, PMU_MAX_GP);

	pmu_test_event(ev, PMU_ARCH_BRANCHES);
	ev->name = "branches (PEBS)";
	return check(x < PMU_MAX_GP && pmu_event_add_idx(ev, (int)x) == PMU_OK, "PEBS counter %u: %s", x,
		     ev->reason);
}

/* Parse record k of the buffer; false after a failed check. */
static bool record_at(const struct pebs_run *r, unsigned k, struct pmu_pebs_record *rec)
{
	char why[PMU_REASON_LEN];
	size_t off = (size_t)k * r->size;

	return check(pmu_pebs_parse(pebs_here(), pebs_buf + off, (size_t)(r->index - ds.pebs_base) - off, rec,
				    why, sizeof(why)) == PMU_OK,
		     "record %u: %s", k, why);
}

/* A record's TSC (format 3's 0xC0, the adaptive basic group's): the
 * time stamp counter when the record was written (SDM vol. 3B, "PEBS
 * Record Format" and "Adaptive PEBS"), so within the TSC read right
 * before and right after the path. Under a hypervisor, whose TSC offset
 * or scaling the record need not follow, reported only. */
static bool check_record_tsc(const struct pebs_run *r, unsigned k, const struct pmu_pebs_record *rec)
{
	if (!rec->has_tsc)
		return true;
	/* QEMU's TCG is an emulator, not a VMM: its TSC is the guest's. */
	if (pmu_caps()->hypervisor && pmu_caps()->hv != PMU_HV_TCG) {
		if (rec->tsc < r->tsc[0] || rec->tsc > r->tsc[1])
			diag("record %u: TSC %#lx outside the path's %#lx..%#lx (under a hypervisor)", k,
			     (unsigned long)rec->tsc, (unsigned long)r->tsc[0], (unsigned long)r->tsc[1]);
		return true;
	}
	return check(rec->tsc >= r->tsc[0] && rec->tsc <= r->tsc[1],
		     "record %u: TSC %#lx, expected the path's %#lx..%#lx (the TSC when it was written)", k,
		     (unsigned long)rec->tsc, (unsigned long)r->tsc[0], (unsigned long)r->tsc[1]);
}

static unsigned records_in(const struct pebs_run *r)
{
	return (unsigned)((r->index - ds.pebs_base) / r->size);
}

/* The path's state at a boundary: block k's LEA (RAX = k) or its JMP
 * (RAX = k + 1). False if ip is no instruction boundary of the path. */
static bool path_rax_at(uint64_t ip, uint64_t *rax)
{
	uint64_t off = ip - (uint64_t)pebs_path_start;

	if (ip < (uint64_t)pebs_path_start || ip > (uint64_t)pebs_path_end)
		return false;
	if (off % PEBS_BLOCK_BYTES == 0)
		return *rax = off / PEBS_BLOCK_BYTES, true;
	if (off % PEBS_BLOCK_BYTES == PEBS_LEA_BYTES)
		return *rax = off / PEBS_BLOCK_BYTES + 1, true;
	return false;
}

static bool is_path_jmp(uint64_t ip)
{
	return ip >= (uint64_t)pebs_path_start && ip < (uint64_t)pebs_path_end &&
	       (ip - (uint64_t)pebs_path_start) % PEBS_BLOCK_BYTES == PEBS_LEA_BYTES;
}

/* Period 40 over 256 branches: 6 overflows, the last 16 branches before
 * the end, so a record late by a few branches still lands inside. */
#define PEBS_PERIOD 40
#define PEBS_RECORDS (PEBS_BLOCKS / PEBS_PERIOD)

static void diag_records(const struct pebs_run *r)
{
	const struct pmu_pebs_caps *p = pebs_here();
	struct pmu_pebs_record rec;
	char why[PMU_REASON_LEN];

	diag("PEBS format %u%s, record %u bytes, DATA_CFG %#lx; buffer %p, index +%lu; counter %#lx, status %#lx",
	     p->format, p->adaptive ? " (adaptive)" : "", r->size, (unsigned long)r->data_cfg,
	     (void *)pebs_buf, (unsigned long)(r->index - ds.pebs_base), (unsigned long)r->counter,
	     (unsigned long)r->status);
	for (unsigned k = 0; k < records_in(r) && k < 8; k++) {
		if (pmu_pebs_parse(p, pebs_buf + k * r->size, r->size, &rec, why, sizeof(why)) != PMU_OK) {
			diag("  record %u: %s", k, why);
			continue;
		}
		diag("  record %u: ip %#lx rip %#lx rax %lu applicable %#lx (path %p-%p)", k,
		     (unsigned long)rec.ip, (unsigned long)rec.rip, (unsigned long)rec.gpr[PMU_GPR_RAX],
		     (unsigned long)rec.applicable, (const void *)pebs_path_start,
		     (const void *)pebs_path_end);
	}
}

/* The run every record check uses: PEBS_PERIOD, adaptive with the GPR
 * group where there is adaptive PEBS (the fixed formats always save
 * them). */
static bool standard_run(struct pmu_event *ev, struct pebs_run *r)
{
	bool adaptive = pebs_here()->adaptive;

	*r = (struct pebs_run){ .period = PEBS_PERIOD,
				.adaptive = adaptive,
				.data_cfg = adaptive ? BIT(PEBS_DATA_CFG_GPRS_BIT) : 0 };
	return pebs_run(ev, r);
}

KTEST("pmu.pebs", record_per_overflow, needs_pebs, KTEST_PER_CPU,
      "one PEBS record per overflow of a branch counter, reloaded each time")
{
	struct pmu_event ev;
	struct pebs_run r;
	bool ok = true;

	if (!pebs_event(&ev))
		return;
	if (standard_run(&ev, &r)) {
		unsigned n = records_in(&r);
		uint64_t mask = pmu_width_mask(ev.hw.width), left = (0 - r.counter) & mask;

		ok &= check(
			r.index - ds.pebs_base == (uint64_t)n * r.size && n == PEBS_RECORDS,
			"%u branches, period %u: expected %u records of %u bytes, the DS index moved %lu bytes",
			PEBS_BLOCKS, PEBS_PERIOD, PEBS_RECORDS, r.size,
			(unsigned long)(r.index - ds.pebs_base));
		for (unsigned k = 0; k < n && k < PEBS_RECORDS; k++) {
			struct pmu_pebs_record rec;
			if (!record_at(&r, k, &rec))
				ok = false;
			else
				ok &= check(rec.size == r.size && (!rec.has_applicable ||
								   (rec.applicable & pmu_idx_bit(ev.hw.idx))),
					    "record %u: size %u (expected %u), applicable counters %#lx (expected bit %d)",
					    k, rec.size, r.size, (unsigned long)rec.applicable, ev.hw.idx) &&
				      check_record_tsc(&r, k, &rec);
		}
		/* Reloaded from the DS reset value after each record: the
		 * counter ends within one period below zero. */
		ok &= check(
			left >= 1 && left <= PEBS_PERIOD,
			"counter %#lx after the run: expected -1..-%u (reloaded to -%u after each record)",
			(unsigned long)r.counter, PEBS_PERIOD, PEBS_PERIOD);
		diag("counter %lu branches short of overflow after the run (%u branches past the last record)",
		     left, PEBS_PERIOD - (unsigned)left);
		if (!ok)
			diag_records(&r);
	}
	pmu_event_del(&ev);
}

KTEST("pmu.pebs", record_ip, needs_pebs, KTEST_PER_CPU,
      "each PEBS record's eventing IP is a JMP of the path, its RIP inside it")
{
	struct pmu_event ev;
	struct pebs_run r;
	bool ok = true;

	if (!pebs_event(&ev))
		return;
	if (standard_run(&ev, &r)) {
		unsigned n = records_in(&r);
		ok &= check(n > 0, "no PEBS record written");
		for (unsigned k = 0; k < n; k++) {
			struct pmu_pebs_record rec;
			uint64_t rax;
			if (!record_at(&r, k, &rec)) {
				ok = false;
				continue;
			}
			/* The instruction that retired the counted branch. */
			if (rec.has_ip)
				ok &= check(
					is_path_jmp(rec.ip),
					"record %u: eventing IP %#lx is not one of the path's JMPs (%p + 6k + 4)",
					k, (unsigned long)rec.ip, (const void *)pebs_path_start);
			/* Trap-like: the instruction after the event. */
			if (rec.has_gprs)
				ok &= check(
					path_rax_at(rec.rip, &rax),
					"record %u: RIP %#lx is no instruction boundary of the path [%p, %p]",
					k, (unsigned long)rec.rip, (const void *)pebs_path_start,
					(const void *)pebs_path_end);
			if (rec.has_ip && rec.has_gprs && k == 0)
				diag("record 0: eventing IP %+ld bytes from the path, RIP %+ld (skid %ld bytes)",
				     (long)(rec.ip - (uint64_t)pebs_path_start),
				     (long)(rec.rip - (uint64_t)pebs_path_start), (long)(rec.rip - rec.ip));
		}
		if (!ok)
			diag_records(&r);
	}
	pmu_event_del(&ev);
}

KTEST("pmu.pebs", record_gprs, needs_pebs, KTEST_PER_CPU,
      "PEBS records hold the path's registers: RAX agrees with RIP, the rest known")
{
	static const char *const names[16] = { "RAX", "RCX", "RDX", "RBX", "RSP", "RBP", "RSI", "RDI",
					       "R8",  "R9",  "R10", "R11", "R12", "R13", "R14", "R15" };
	struct pmu_event ev;
	struct pebs_run r;
	bool ok = true;

	if (!pebs_event(&ev))
		return;
	if (standard_run(&ev, &r)) {
		unsigned n = records_in(&r);
		ok &= check(n > 0, "no PEBS record written");
		for (unsigned k = 0; k < n; k++) {
			struct pmu_pebs_record rec;
			uint64_t rax = 0;
			if (!record_at(&r, k, &rec)) {
				ok = false;
				continue;
			}
			if (!check(rec.has_gprs, "record %u has no GPRs (format %#lx)", k,
				   (unsigned long)rec.format_field)) {
				ok = false;
				continue;
			}
			ok &= check(path_rax_at(rec.rip, &rax) && rec.gpr[PMU_GPR_RAX] == rax,
				    "record %u: RAX %lu at RIP %#lx; the path holds RAX = %lu there", k,
				    (unsigned long)rec.gpr[PMU_GPR_RAX], (unsigned long)rec.rip,
				    (unsigned long)rax);
			for (unsigned g = 1; g < 16; g++) {
				uint64_t want = g == PMU_GPR_RSP ? pebs_ctl.rsp : PEBS_GPR(g);
				ok &= check(rec.gpr[g] == want, "record %u: %s %#lx, expected %#lx", k,
					    names[g], (unsigned long)rec.gpr[g], (unsigned long)want);
			}
			ok &= check(rec.rflags == pebs_ctl.rflags,
				    "record %u: RFLAGS %#lx, the path runs with %#lx", k,
				    (unsigned long)rec.rflags, (unsigned long)pebs_ctl.rflags);
		}
		if (!ok)
			diag_records(&r);
	}
	pmu_event_del(&ev);
}

struct thresh_view {
	unsigned calls;
	uint64_t status, index;
};

static void observe_thresh(void *ctx, uint64_t status)
{
	struct thresh_view *v = ctx;

	if (!v->calls++) {
		v->status = status;
		v->index = ds.pebs_index;
	}
}

KTEST("pmu.pebs", threshold_pmi, needs_pebs_pmi, KTEST_PER_CPU,
      "the buffer PMI (OvfBuf) comes when the index reaches the threshold")
{
	/* Period 80: 3 records. Threshold at 3 records: one PMI with bit 62
	 * and the index there; at 4: none. The window runs with interrupts
	 * off, so the PMI is taken right after it. */
	static const unsigned at[2] = { 3, 4 };
	struct pmu_event ev;

	if (!pebs_event(&ev))
		return;
	for (unsigned t = 0; t < 2; t++) {
		struct pebs_run r = {
			.period = 80, .adaptive = pebs_here()->adaptive, .data_cfg = 0, .thresh_rec = at[t]
		};
		struct thresh_view v = { 0 };
		struct pmu_pmi_stats s0, s1;
		uint64_t ovf = BIT(PERF_GLOBAL_STATUS_OVF_BUF_BIT);

		pmu_hw_wrmsr(pmu_caps()->global_ovf, ovf);
		pmu_pmi_get_stats(pmu_hw_cpu(), &s0);
		pmu_pmi_set_observer(observe_thresh, &v);
		bool ran = pebs_run(&ev, &r);
		udelay(1000);
		pmu_pmi_set_observer(NULL, NULL);
		pmu_pmi_get_stats(pmu_hw_cpu(), &s1);
		if (!ran)
			break;
		unsigned n = records_in(&r);
		check(n == 3, "threshold %u: expected 3 records (period 80, %u branches), found %u", at[t],
		      PEBS_BLOCKS, n);
		if (at[t] == 3) {
			check(s1.pmis - s0.pmis == 1 && v.calls == 1,
			      "threshold at 3 records: expected one PMI, the handler ran %lu times",
			      (unsigned long)(s1.pmis - s0.pmis));
			check((v.status & ovf) && v.index == ds.pebs_base + 3ull * r.size,
			      "at the PMI: GLOBAL_STATUS %#lx (expected OvfBuf, bit 62), DS index +%lu (expected +%u)",
			      (unsigned long)v.status, (unsigned long)(v.index - ds.pebs_base), 3 * r.size);
			diag("threshold PMI: status %#lx (counter %d's own bit %s)", (unsigned long)v.status,
			     ev.hw.idx, (v.status & pmu_idx_bit(ev.hw.idx)) ? "set" : "clear");
		} else {
			check(s1.pmis == s0.pmis && !(r.status & ovf),
			      "threshold at 4 records, 3 written: expected no PMI and OvfBuf clear, saw %lu PMIs, "
			      "status %#lx",
			      (unsigned long)(s1.pmis - s0.pmis), (unsigned long)r.status);
		}
		pmu_hw_wrmsr(pmu_caps()->global_ovf, ovf);
	}
	pmu_event_del(&ev);
}

KTEST("pmu.pebs", adaptive_groups, needs_adaptive, KTEST_PER_CPU,
      "adaptive records follow MSR_PEBS_DATA_CFG: size and format field")
{
	struct pmu_event ev;

	if (!pebs_event(&ev))
		return;
	/* Every group combination as kvm-unit-tests x86/pmu_pebs.c runs
	 * them, with 32 LBR entries when the LBR group is asked for; and the
	 * counter's adaptive bit clear ("Ignored Adaptive"): basic group
	 * only, format field 0. */
	for (unsigned g = 0; g <= 0x10; g++) {
		uint64_t cfg = g & 0xf;
		bool adaptive = g < 0x10;
		struct pebs_run r;

		if (!adaptive)
			cfg = BIT(PEBS_DATA_CFG_GPRS_BIT) | BIT(PEBS_DATA_CFG_MEMINFO_BIT);
		if ((cfg >> PEBS_DATA_CFG_LBRS_BIT) & 1)
			cfg |= (32ull - 1) << PEBS_DATA_CFG_LBR_SHIFT;
		r = (struct pebs_run){ .period = PEBS_PERIOD, .adaptive = adaptive, .data_cfg = cfg };
		if (!pebs_run(&ev, &r))
			break;
		unsigned n = records_in(&r);
		bool ok = check(n == PEBS_RECORDS && r.index - ds.pebs_base == (uint64_t)n * r.size,
				"DATA_CFG %#lx%s: expected %u records of %u bytes, the index moved %lu bytes",
				(unsigned long)cfg, adaptive ? "" : " (adaptive bit clear)", PEBS_RECORDS,
				r.size, (unsigned long)(r.index - ds.pebs_base));
		for (unsigned k = 0; k < n && ok; k++) {
			struct pmu_pebs_record rec;
			uint64_t want = adaptive ? cfg : 0;
			ok &= record_at(&r, k, &rec) &&
			      check(rec.format_field == want && rec.size == r.size,
				    "DATA_CFG %#lx%s, record %u: format field %#lx size %u, expected %#lx and %u",
				    (unsigned long)cfg, adaptive ? "" : " (adaptive bit clear)", k,
				    (unsigned long)rec.format_field, rec.size, (unsigned long)want, r.size) &&
			      check_record_tsc(&r, k, &rec);
		}
		if (!ok)
			diag_records(&r);
	}
	pmu_event_del(&ev);
}

KTEST("pmu.pebs", no_foreign_lbr, needs_adaptive, KTEST_PER_CPU,
      "with LBRs emptied and off, the records' 32 LBR entries are all zero")
{
	struct pmu_lbr_caps l;
	struct pmu_event ev;
	struct pebs_run r;
	uint64_t cfg = BIT(PEBS_DATA_CFG_LBRS_BIT) | (32ull - 1) << PEBS_DATA_CFG_LBR_SHIFT;

	/* kvm-unit-tests 8d0f574f: a guest that never enabled LBRs must
	 * not find any in its PEBS records (the CPU writes records without
	 * the VMX MSR bitmap). Here: the stack emptied and recording off. */
	pmu_lbr_decode(pmu_caps(), &l);
	if (l.kind != PMU_LBR_NONE && !check(pmu_lbr_clear(&l) == 0, "emptying the LBR stack faulted"))
		return;
	if (!pebs_event(&ev))
		return;
	r = (struct pebs_run){ .period = PEBS_PERIOD, .adaptive = true, .data_cfg = cfg };
	if (pebs_run(&ev, &r)) {
		unsigned n = records_in(&r);
		bool ok = check(n > 0, "no PEBS record written");
		for (unsigned k = 0; k < n; k++) {
			struct pmu_pebs_record rec;
			if (!record_at(&r, k, &rec)) {
				ok = false;
				continue;
			}
			ok &= check(rec.lbr_total == 32, "record %u: %u LBR entries, expected 32", k,
				    rec.lbr_total);
			for (unsigned e = 0; e < rec.lbr_n; e++)
				ok &= check(
					!rec.lbr[e].from && !rec.lbr[e].to,
					"record %u: LBR entry %u is %#lx -> %#lx (info %#lx), expected empty",
					k, e, (unsigned long)rec.lbr[e].from, (unsigned long)rec.lbr[e].to,
					(unsigned long)rec.lbr[e].info);
		}
		if (!ok)
			diag_records(&r);
	}
	pmu_event_del(&ev);
}

/* n retired branches exactly: one JNZ per iteration. */
static void branch_loop(unsigned n)
{
	__asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

/* Several counters with PEBS at once: every free PEBS GP counter counts
 * branches, each with its own period, and fixed counter 0 (instructions,
 * a count the path fixes too) where PEBS reaches fixed counters. The
 * periods are primes above 40 (GP) and 101 (fixed 0): no two counters
 * overflow on the same instruction inside the 256 blocks, so every
 * overflow is a record of its own. The counters' adaptive bits are clear
 * (basic records on adaptive PEBS). The run's window is the path, bracketed
 * by GLOBAL_CTRL (off_pebs_first false) or by PEBS_ENABLE with the
 * counters left counting after it for tail branches (true). Single
 * static storage, like ds and pebs_buf: the PEBS checks run one CPU at a
 * time. */
#define PEBS_MULTI_MAX 9
#define PEBS_FIXED0_PERIOD 101
static const uint64_t pebs_multi_periods[PEBS_MULTI_MAX - 1] = { 41, 43, 47, 53, 59, 61, 67, 71 };
static struct pebs_multi {
	unsigned n;
	struct pmu_event ev[PEBS_MULTI_MAX];
	struct pmu_event *evp[PEBS_MULTI_MAX];
	uint64_t period[PEBS_MULTI_MAX];
	uint64_t counter[PEBS_MULTI_MAX]; /* after the run */
	uint64_t mask;                    /* PEBS_ENABLE */
	unsigned size;
	uint64_t index, status;
	uint64_t tail_before, tail_after; /* GP counter 0 of the set around the tail branches */
} multi;

/* Reserve the counters: up to max GP ones, and fixed 0 if with_fixed and PEBS
 * reaches it. False after a failed check (nothing held). */
static bool pebs_multi_events(unsigned max_gp, bool with_fixed)
{
	const struct pmu_pebs_caps *p = pebs_here();
	uint64_t free = p->counters & pmu_test_free_gp();

	multi.n = 0;
	multi.mask = 0;
	for (unsigned x = 0; x < PMU_MAX_GP && multi.n < max_gp && multi.n < PEBS_MULTI_MAX - 1; x++) {
		struct pmu_event *ev = &multi.ev[multi.n];
		if (!((free >> x) & 1))
			continue;
		pmu_test_event(ev, PMU_ARCH_BRANCHES);
		ev->name = "branches (PEBS)";
		if (!check(pmu_event_add_idx(ev, (int)x) == PMU_OK, "PEBS counter %u: %s", x, ev->reason))
			goto fail;
		multi.period[multi.n] = pebs_multi_periods[multi.n];
		multi.evp[multi.n++] = ev;
	}
	if (with_fixed && ((p->counters >> PEBS_ENABLE_FIXED_SHIFT) & pmu_test_free_fixed() & 1) &&
	    pmu_caps()->fixed_width) {
		struct pmu_event *ev = &multi.ev[multi.n];
		pmu_test_event(ev, pmu_arch_event_of_fixed(0));
		ev->name = "fixed 0 (PEBS)";
		if (!check(pmu_event_add_idx(ev, PMU_IDX_FIXED(0)) == PMU_OK, "PEBS on fixed counter 0: %s",
			   ev->reason))
			goto fail;
		multi.period[multi.n] = PEBS_FIXED0_PERIOD;
		multi.evp[multi.n++] = ev;
	}
	return true;
fail:
	pmu_events_del(multi.evp, multi.n);
	multi.n = 0;
	return false;
}

static bool pebs_multi_run(bool off_pebs_first)
{
	const struct pmu_caps *c = pmu_caps();
	const struct pmu_pebs_caps *p = pebs_here();
	struct pmu_bracket_regs br;
	int f = 0;
	bool was;

	multi.size = pmu_pebs_record_size(p, false, 0);
	if (!check(multi.size && multi.size <= PEBS_BUF_SIZE, "PEBS format %u: basic record size %u bytes",
		   p->format, multi.size))
		return false;
	memset(&ds, 0, sizeof(ds));
	memset(pebs_buf, 0, sizeof(pebs_buf));
	ds.pebs_base = ds.pebs_index = (uint64_t)pebs_buf;
	ds.pebs_max = (uint64_t)pebs_buf + PEBS_BUF_SIZE / multi.size * multi.size;
	ds.pebs_threshold = ds.pebs_max + 1;
	if (!check(pmu_events_arm(multi.evp, multi.n, &br) == PMU_OK, "arming %u PEBS counters: %s", multi.n,
		   multi.ev[0].reason))
		return false;
	multi.mask = 0;
	for (unsigned k = 0; k < multi.n; k++) {
		struct pmu_event *ev = multi.evp[k];
		uint64_t start = (0 - multi.period[k]) & pmu_width_mask(ev->hw.width);
		uint64_t *slot = pmu_pebs_reset_slot(p, &ds, ev->hw.idx);
		if (!check(slot != NULL, "no DS reset slot for counter %#x", (unsigned)ev->hw.idx) ||
		    !check(pmu_event_write_counter(ev, start) == PMU_OK, "presetting %s to -%lu: %s",
			   ev->name, (unsigned long)multi.period[k], ev->reason)) {
			pmu_events_disarm(multi.evp, multi.n);
			return false;
		}
		*slot = start;
		multi.mask |= pmu_idx_bit(ev->hw.idx);
	}
	pmu_hw_wrmsr(c->global_ovf, multi.mask);
	f |= pmu_hw_wrmsr(MSR_IA32_DS_AREA, (uint64_t)&ds);
	if (p->adaptive)
		f |= pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, 0);
	if (!off_pebs_first)
		f |= pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, multi.mask);
	if (!check(f == 0, "programming PEBS faulted: DS_AREA, DATA_CFG, PEBS_ENABLE <- %#lx",
		   (unsigned long)multi.mask)) {
		pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
		pmu_events_disarm(multi.evp, multi.n);
		return false;
	}
	was = irq_save();
	if (!off_pebs_first) {
		/* GLOBAL_CTRL off first (the path's last WRMSR), PEBS_ENABLE
		 * still set: the tail branches must count nowhere. */
		pebs_path(br.msr, br.on, br.off);
		pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)multi.evp[0]->hw.idx), &multi.tail_before);
		branch_loop(100);
		pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)multi.evp[0]->hw.idx), &multi.tail_after);
		pmu_hw_wrmsr(MSR_IA32_PEBS_ENABLE, 0);
	} else {
		/* PEBS_ENABLE off first (the path's last WRMSR), the counters
		 * still on: the tail branches count and overflow as a plain
		 * counter does, with no record (kvm-unit-tests x86/pmu_pebs.c
		 * pebs_disable tries both orders). */
		pmu_hw_wrmsr(br.msr, br.on);
		pebs_path(MSR_IA32_PEBS_ENABLE, multi.mask, 0);
		pmu_hw_wrmsr(c->global_ovf, multi.mask);
		pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)multi.evp[0]->hw.idx), &multi.tail_before);
		branch_loop(100);
		pmu_hw_wrmsr(br.msr, br.off);
		pmu_hw_rdmsr(pmu_ctr_msr(c, (unsigned)multi.evp[0]->hw.idx), &multi.tail_after);
	}
	irq_restore(was);
	for (unsigned k = 0; k < multi.n; k++) {
		const struct pmu_event *ev = multi.evp[k];
		uint32_t msr = PMU_IDX_IS_FIXED(ev->hw.idx)
				       ? pmu_fixed_msr(c, (unsigned)(ev->hw.idx - PMU_IDX_FIXED_BASE))
				       : pmu_ctr_msr(c, (unsigned)ev->hw.idx);
		pmu_hw_rdmsr(msr, &multi.counter[k]);
	}
	pmu_hw_rdmsr(c->global_status, &multi.status);
	pmu_events_disarm(multi.evp, multi.n);
	if (p->adaptive)
		pmu_hw_wrmsr(MSR_PEBS_DATA_CFG, 0);
	pmu_hw_wrmsr(MSR_IA32_DS_AREA, 0);
	pmu_hw_wrmsr(c->global_ovf, multi.mask);
	multi.index = ds.pebs_index;
	return true;
}

/* Records of the multi run, and how many name counter k. */
static unsigned multi_records(void)
{
	return (unsigned)((multi.index - ds.pebs_base) / multi.size);
}

/* The records the path makes counter k write: GP ones one per period of
 * the 256 branches; fixed counter 0 one per period of the path's
 * instructions (5 before the first block, 512 in them: the last overflow
 * at 505 lies inside the blocks whether or not the enabling WRMSR counts). */
static unsigned multi_expected(unsigned k)
{
	unsigned events = PMU_IDX_IS_FIXED(multi.evp[k]->hw.idx) ? 2 * PEBS_BLOCKS : PEBS_BLOCKS;

	return events / (unsigned)multi.period[k];
}

static const char *needs_pebs_several(void)
{
	const char *why = needs_pebs();
	uint64_t free;

	if (why)
		return why;
	free = pebs_here()->counters & pmu_test_free_gp();
	if (!(free & (free - 1)) && !((pebs_here()->counters >> PEBS_ENABLE_FIXED_SHIFT) & 1))
		return ktest_reason("one free PEBS counter (PEBS counters %#lx, free GP %#x)",
				    (unsigned long)pebs_here()->counters, pmu_test_free_gp());
	return NULL;
}

KTEST("pmu.pebs", several_counters, needs_pebs_several, KTEST_PER_CPU,
      "PEBS on every free PEBS counter at once, fixed 0 too: each its own records")
{
	const struct pmu_pebs_caps *p = pebs_here();
	unsigned want_total = 0, n;

	if (!pebs_multi_events(PEBS_MULTI_MAX - 1, true))
		return;
	if (pebs_multi_run(false)) {
		n = multi_records();
		for (unsigned k = 0; k < multi.n; k++)
			want_total += multi_expected(k);
		check(n == want_total && multi.index - ds.pebs_base == (uint64_t)n * multi.size,
		      "%u counters with PEBS: expected %u records of %u bytes (one per overflow), the DS index "
		      "moved %lu bytes",
		      multi.n, want_total, multi.size, (unsigned long)(multi.index - ds.pebs_base));
		for (unsigned k = 0; k < multi.n; k++) {
			const struct pmu_event *ev = multi.evp[k];
			uint64_t left = (0 - multi.counter[k]) & pmu_width_mask(ev->hw.width);
			unsigned mine = 0, applicable = 0;
			for (unsigned r = 0; r < n && r < 512; r++) {
				struct pmu_pebs_record rec;
				char why[PMU_REASON_LEN];
				if (pmu_pebs_parse(p, pebs_buf + (size_t)r * multi.size,
						   (size_t)(multi.index - ds.pebs_base) -
							   (size_t)r * multi.size,
						   &rec, why, sizeof(why)) != PMU_OK) {
					check(false, "record %u: %s", r, why);
					break;
				}
				applicable += rec.has_applicable;
				if (rec.has_applicable && (rec.applicable & pmu_idx_bit(ev->hw.idx)))
					mine++;
				if (k == 0 && rec.has_applicable)
					check(rec.applicable & multi.mask,
					      "record %u: applicable counters %#lx, none of the PEBS ones %#lx",
					      r, (unsigned long)rec.applicable, (unsigned long)multi.mask);
			}
			if (applicable)
				check(mine >= multi_expected(k),
				      "%s on counter %#x, period %lu: %u records name it, expected at least %u",
				      ev->name, (unsigned)ev->hw.idx, (unsigned long)multi.period[k], mine,
				      multi_expected(k));
			check(left >= 1 && left <= multi.period[k],
			      "%s on counter %#x after the run: %#lx, expected -1..-%lu (reloaded after each record)",
			      ev->name, (unsigned)ev->hw.idx, (unsigned long)multi.counter[k],
			      (unsigned long)multi.period[k]);
		}
		diag("%u counters with PEBS (PEBS_ENABLE %#lx), %u records of %u bytes", multi.n,
		     (unsigned long)multi.mask, n, multi.size);
	}
	pmu_events_del(multi.evp, multi.n);
}

KTEST("pmu.pebs", switch_off_order, needs_pebs, KTEST_PER_CPU,
      "PEBS_ENABLE cleared before or after GLOBAL_CTRL: no record once it is clear")
{
	const struct pmu_caps *c = pmu_caps();

	for (unsigned order = 0; order < 2; order++) {
		bool pebs_first = order == 1;
		const char *how = pebs_first ? "PEBS_ENABLE cleared first" : "GLOBAL_CTRL cleared first";
		if (!pebs_multi_events(1, false))
			return;
		if (!pebs_multi_run(pebs_first)) {
			pmu_events_del(multi.evp, multi.n);
			return;
		}
		const struct pmu_event *ev = multi.evp[0];
		uint64_t wmask = pmu_width_mask(ev->hw.width), bit = pmu_idx_bit(ev->hw.idx);
		unsigned n = multi_records(), want = multi_expected(0);
		/* The path's branches plus the few of the C code between the
		 * WRMSRs (PEBS_ENABLE first): overflows at 41 .. 246 either way. */
		check(n == want, "%s: expected %u records (256 branches, period %lu), found %u", how, want,
		      (unsigned long)multi.period[0], n);
		if (!pebs_first) {
			check(multi.tail_after == multi.tail_before,
			      "%s: 100 branches with PEBS_ENABLE still set moved the stopped counter %#lx -> %#lx",
			      how, (unsigned long)multi.tail_before, (unsigned long)multi.tail_after);
		} else {
			/* Before the tail the counter was within one period below
			 * zero; 100 branches later it has passed zero as a plain
			 * counter: no reload, its status bit set. */
			uint64_t v = multi.counter[0];
			check(v >= 1 && v <= 200 && (multi.status & bit),
			      "%s: after 100 more branches the counter is %#lx (from %#lx), status %#lx; expected it "
			      "wrapped past zero without a PEBS reload (1..200) and status bit %d set",
			      how, (unsigned long)v, (unsigned long)multi.tail_before,
			      (unsigned long)multi.status, ev->hw.idx);
			diag("%s: counter %#lx before the tail, %#lx after (width mask %#lx)", how,
			     (unsigned long)multi.tail_before, (unsigned long)v, (unsigned long)wmask);
		}
		pmu_hw_wrmsr(c->global_ovf, bit);
		pmu_events_del(multi.evp, multi.n);
	}
}

KTEST("pmu.pebs", no_overflow_no_record, needs_pebs, KTEST_PER_CPU,
      "no overflow, no PEBS record: several start values short of zero")
{
	const struct pmu_caps *c = pmu_caps();
	struct pmu_event ev;
	/* Start values the 256 branches do not carry past zero, and one
	 * (-200) that they do, once: the same run must see that record. */
	uint64_t starts[6] = { 0, 1, 0 - 257ull, 0 - 1000ull, 0 - 200ull, 0 };
	unsigned nstarts = 5;

	if (!pebs_event(&ev))
		return;
	/* With full-width writes: a start whose 256 branches carry across
	 * bit 32, which is no overflow of a wider counter. */
	if (intel_caps(c)->full_width_write && ev.hw.width > 33)
		starts[nstarts++] = 0xffffff80ull;
	for (unsigned s = 0; s < nstarts; s++) {
		uint64_t mask = pmu_width_mask(ev.hw.width), start = starts[s] & mask,
			 bit = pmu_idx_bit(ev.hw.idx);
		struct pebs_run r = { .period = (0 - start) & mask, .adaptive = false, .data_cfg = 0 };
		bool crosses = start + PEBS_BLOCKS > mask;
		unsigned want = crosses ? 1 : 0;

		pmu_hw_wrmsr(c->global_ovf, bit);
		if (!pebs_run(&ev, &r))
			break;
		unsigned n = records_in(&r);
		check(n == want && r.index - ds.pebs_base == (uint64_t)n * r.size,
		      "start %#lx, 256 branches: expected %u records, the DS index moved %lu bytes (%u bytes each)",
		      (unsigned long)start, want, (unsigned long)(r.index - ds.pebs_base), r.size);
		if (!crosses)
			check(r.counter == ((start + PEBS_BLOCKS) & mask) && !(r.status & bit),
			      "start %#lx, 256 branches: counter %#lx (expected %#lx), GLOBAL_STATUS %#lx (bit %d "
			      "expected clear)",
			      (unsigned long)start, (unsigned long)r.counter,
			      (unsigned long)((start + PEBS_BLOCKS) & mask), (unsigned long)r.status,
			      ev.hw.idx);
		pmu_hw_wrmsr(c->global_ovf, bit);
	}
	pmu_event_del(&ev);
}

/* --- Adaptive PEBS on fixed counter 0, and its LBR group --- */

static const char *needs_adaptive_fixed0(void)
{
	const char *why = needs_adaptive();

	if (why)
		return why;
	if (!((pebs_here()->counters >> PEBS_ENABLE_FIXED_SHIFT) & 1))
		return ktest_reason("fixed counter 0 cannot use PEBS (PEBS counters %#lx)",
				    (unsigned long)pebs_here()->counters);
	if (!(pmu_test_free_fixed() & 1))
		return "fixed counter 0 is in use";
	return NULL;
}

/* PEBS on fixed counter 0 (instructions, PEBS_ENABLE bit 32) with its
 * adaptive bit, IA32_FIXED_CTR_CTRL bit 32 (SDM vol. 3B, "Adaptive
 * PEBS"; Linux ICL_FIXED_0_ADAPTIVE), set and then clear, DATA_CFG
 * asking for memory info and GPRs: set, each record holds those groups
 * (its format field DATA_CFG's bits); clear, the basic group alone
 * (format field 0, as pmu.pebs.adaptive_groups for a GP counter). Period
 * 101 over the path's 512 instructions and the few before its first
 * block: 5 records, each naming fixed 0, at an instruction of the path,
 * its GPRs (when there) agreeing with its RIP. */
KTEST("pmu.pebs", adaptive_fixed0, needs_adaptive_fixed0, KTEST_PER_CPU,
      "adaptive PEBS on fixed counter 0: its adaptive bit picks the groups")
{
	const uint64_t cfg = BIT(PEBS_DATA_CFG_GPRS_BIT) | BIT(PEBS_DATA_CFG_MEMINFO_BIT);
	struct pmu_event ev;

	pmu_test_event(&ev, pmu_arch_event_of_fixed(0));
	ev.name = "fixed 0 (PEBS)";
	if (!check(pmu_event_add_idx(&ev, PMU_IDX_FIXED(0)) == PMU_OK, "PEBS on fixed counter 0: %s",
		   ev.reason))
		return;
	for (unsigned t = 0; t < 2; t++) {
		bool adaptive = t == 0;
		struct pebs_run r = { .period = PEBS_FIXED0_PERIOD, .adaptive = adaptive, .data_cfg = cfg };
		uint64_t want = adaptive ? cfg : 0, rax = 0;
		const char *how = adaptive ? "adaptive bit set" : "adaptive bit clear";

		if (!pebs_run(&ev, &r))
			break;
		unsigned n = records_in(&r), want_n = 2 * PEBS_BLOCKS / PEBS_FIXED0_PERIOD;
		bool ok = check(
			n == want_n && r.index - ds.pebs_base == (uint64_t)n * r.size,
			"fixed 0, %s, period %u: expected %u records of %u bytes, the index moved %lu bytes",
			how, PEBS_FIXED0_PERIOD, want_n, r.size, (unsigned long)(r.index - ds.pebs_base));
		for (unsigned k = 0; k < n && ok; k++) {
			struct pmu_pebs_record rec;
			ok &= record_at(&r, k, &rec) &&
			      check(rec.format_field == want && rec.size == r.size,
				    "fixed 0, %s, DATA_CFG %#lx, record %u: format field %#lx size %u, expected %#lx and %u",
				    how, (unsigned long)cfg, k, (unsigned long)rec.format_field, rec.size,
				    (unsigned long)want, r.size) &&
			      check(rec.has_applicable && rec.applicable == pmu_idx_bit(ev.hw.idx) &&
					    rec.has_ip && path_rax_at(rec.ip, &rax),
				    "fixed 0, %s, record %u: applicable %#lx (expected %#lx), IP %#lx (expected an instruction of the path %p-%p)",
				    how, k, (unsigned long)rec.applicable,
				    (unsigned long)pmu_idx_bit(ev.hw.idx), (unsigned long)rec.ip,
				    (const void *)pebs_path_start, (const void *)pebs_path_end) &&
			      (!rec.has_gprs ||
			       check(path_rax_at(rec.rip, &rax) && rec.gpr[PMU_GPR_RAX] == rax,
				     "fixed 0, record %u: RAX %lu at RIP %#lx; the path holds RAX = %lu there",
				     k, (unsigned long)rec.gpr[PMU_GPR_RAX], (unsigned long)rec.rip,
				     (unsigned long)rax));
		}
		if (!ok)
			diag_records(&r);
	}
	pmu_event_del(&ev);
}

static const char *needs_adaptive_lbr(void)
{
	const char *why = needs_adaptive();
	struct pmu_lbr_caps l;

	if (why)
		return why;
	pmu_lbr_decode(pmu_caps(), &l);
	if (l.kind == PMU_LBR_NONE)
		return ktest_reason("%s", l.why);
	return NULL;
}

/* The LBR group of an adaptive record holds the LBR stack's most recent
 * entries, youngest first (SDM vol. 3B, "Adaptive PEBS": the LBR entries
 * group, as many as DATA_CFG[31:24] + 1; Linux struct lbr_entry). With
 * LBRs recording ring 0 around the path, whose only branches are its JMPs
 * and whose first record comes 40 of them in, each of a record's eight
 * entries is a JMP of the path to the next block (from + 2), one block
 * before the entry younger than it. */
KTEST("pmu.pebs", lbr_group, needs_adaptive_lbr, KTEST_PER_CPU,
      "with LBRs on, a record's 8 LBR entries are the path's JMPs, youngest first")
{
	const struct pmu_lbr_filter f = { .os = true, .kinds = PMU_LBR_BR_ALL };
	const uint64_t cfg = BIT(PEBS_DATA_CFG_LBRS_BIT) | (8ull - 1) << PEBS_DATA_CFG_LBR_SHIFT;
	struct pmu_lbr_caps l;
	struct pmu_lbr_regs regs;
	struct pmu_event ev;
	struct pebs_run r;
	char why[PMU_REASON_LEN];
	uint64_t now = 0;

	pmu_lbr_decode(pmu_caps(), &l);
	if (l.kind != PMU_LBR_ARCH)
		pmu_hw_rdmsr(l.ctl_msr, &now);
	if (!check(pmu_lbr_encode(&l, &f, now, &regs, why, sizeof(why)) == PMU_OK,
		   "encoding the %s LBR filter: %s", pmu_lbr_kind_name(l.kind), why) ||
	    !check(pmu_lbr_clear(&l) == 0, "emptying the %s LBR stack faulted", pmu_lbr_kind_name(l.kind)))
		return;
	if (!pebs_event(&ev))
		return;
	r = (struct pebs_run){ .period = PEBS_PERIOD, .adaptive = true, .data_cfg = cfg, .lbr = &regs };
	if (pebs_run(&ev, &r)) {
		unsigned n = records_in(&r);
		bool ok = check(n == PEBS_RECORDS, "DATA_CFG %#lx: %u records, expected %u",
				(unsigned long)cfg, n, PEBS_RECORDS);
		for (unsigned k = 0; k < n && ok; k++) {
			struct pmu_pebs_record rec;
			if (!(ok &= record_at(&r, k, &rec)))
				break;
			ok &= check(rec.lbr_total == 8 && rec.lbr_n == 8,
				    "record %u: %u LBR entries, expected 8", k, rec.lbr_total);
			for (unsigned e = 0; ok && e < rec.lbr_n; e++) {
				uint64_t from = rec.lbr[e].from, to = rec.lbr[e].to;
				ok &= check(
					is_path_jmp(from) && to == from + 2 &&
						(e == 0 || from + PEBS_BLOCK_BYTES == rec.lbr[e - 1].from),
					"record %u, LBR entry %u: %#lx -> %#lx (info %#lx); expected a JMP of the path (%p + 6k + 4) to the next block%s",
					k, e, (unsigned long)from, (unsigned long)to,
					(unsigned long)rec.lbr[e].info, (const void *)pebs_path_start,
					e ? ", one block before the entry younger than it" : "");
			}
		}
		if (!ok)
			diag_records(&r);
	}
	pmu_lbr_clear(&l);
	pmu_event_del(&ev);
}
