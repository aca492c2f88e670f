/* Per-CPU PMU state: decode the calling CPU's capabilities through its
 * vendor backend, run the boot scan and probe, and report every distinct
 * CPU type once. Each CPU touches only its own entry. */
#include "arch/x86/cpuid.h"
#include "lib/bits.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "pmu/pmu_hw.h"
#include "pmu/pmu_internal.h"

static struct pmu_cpu pmu_cpus[PMU_MAX_CPUS];
/* What pmu_init_all was given, for pmu_cpu_ensure. */
static struct pmu_init_opts boot_opts;

struct pmu_cpu *pmu_cpu_of(unsigned cpu)
{
	return cpu < PMU_MAX_CPUS ? &pmu_cpus[cpu] : NULL;
}

struct pmu_cpu *pmu_this_cpu(void)
{
	return pmu_cpu_of(pmu_hw_cpu());
}

const struct pmu_caps *pmu_caps(void)
{
	struct pmu_cpu *pc = pmu_this_cpu();
	return pc ? &pc->caps : NULL;
}

static void put_reg(char *dst, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		dst[i] = (char)(v >> (8 * i));
}

/* Which hypervisor (arch/x86/hypervisor.h decides). */
static void pmu_decode_hypervisor(struct pmu_caps *c)
{
	struct hv_id id;

	hv_identify(c->hypervisor, pmu_hw_cpuid, &id);
	c->hv = (enum pmu_hv)id.hv;
	c->hv_leaf = id.leaf;
	memcpy(c->hv_signature, id.signature, sizeof(c->hv_signature));
}

/* Vendor string, DisplayFamily/DisplayModel (SDM vol. 2A, CPUID, "Version
 * Information": the extended model counts for families 6 and 0FH, the
 * extended family for 0FH) and the hypervisor bit (CPUID.01H:ECX[31])
 * with the hypervisor it names. */
static void pmu_decode_generic(struct pmu_caps *c)
{
	struct cpuid_regs r;
	uint32_t fam, model;

	pmu_hw_cpuid(0, 0, &r);
	c->max_leaf = r.eax;
	put_reg(c->vendor_id, r.ebx);
	put_reg(c->vendor_id + 4, r.edx);
	put_reg(c->vendor_id + 8, r.ecx);
	c->vendor_id[12] = '\0';
	if (c->max_leaf < 1)
		return;
	pmu_hw_cpuid(1, 0, &r);
	fam = BITS(r.eax, 11, 8);
	model = BITS(r.eax, 7, 4);
	if (fam == 0xf)
		fam += BITS(r.eax, 27, 20);
	if (fam == 0x6 || fam >= 0xf)
		model |= BITS(r.eax, 19, 16) << 4;
	c->family = fam;
	c->model = model;
	c->stepping = BITS(r.eax, 3, 0);
	c->hypervisor = (r.ecx >> CPUID_1_ECX_HYPERVISOR_BIT) & 1;
	c->cx16 = (r.ecx >> CPUID_1_ECX_CX16_BIT) & 1;
	pmu_decode_hypervisor(c);
}

void pmu_cpu_init(const struct pmu_init_opts *opts)
{
	unsigned cpu = pmu_hw_cpu();
	struct pmu_cpu *pc = pmu_cpu_of(cpu);

	if (!pc)
		return;
	memset(pc, 0, sizeof(*pc));
	pc->cpu = cpu;
	pc->probe_gp = -1;
	pmu_decode_generic(&pc->caps);
	pmu_topology_read(&pc->topo);
	pc->ops = pmu_backend_for(pc->caps.vendor_id);
	if (pc->ops)
		pc->ops->decode_caps(&pc->caps);
	pc->initialised = true;
	pmu_inuse_scan(pc);
	if (opts && opts->takeover)
		pmu_inuse_takeover(pc);
	pmu_probe(pc, opts);
}

static void pmu_init_one(void *arg)
{
	pmu_cpu_init(arg);
}

void pmu_init_all(const struct pmu_init_opts *opts,
		  void (*run_on)(unsigned cpu, void (*fn)(void *), void *arg))
{
	unsigned n = pmu_hw_ncpus();

	if (opts)
		boot_opts = *opts;
	for (unsigned cpu = 0; cpu < n && cpu < PMU_MAX_CPUS; cpu++)
		run_on(cpu, pmu_init_one, (void *)(uintptr_t)opts);
}

struct pmu_cpu *pmu_cpu_ensure(void)
{
	struct pmu_cpu *pc = pmu_this_cpu();

	if (pc && !pc->initialised)
		pmu_cpu_init(&boot_opts);
	return pc;
}

const struct pmu_caps *pmu_cpu_caps(const struct pmu_cpu *pc)
{
	return &pc->caps;
}
bool pmu_cpu_counts(const struct pmu_cpu *pc)
{
	return pc->counting;
}
const char *pmu_cpu_reason(const struct pmu_cpu *pc)
{
	return pc->reason;
}
int pmu_cpu_probe_gp(const struct pmu_cpu *pc)
{
	return pc->probe_gp;
}
bool pmu_cpu_rdpmc_ok(const struct pmu_cpu *pc)
{
	return pc->rdpmc_ok;
}
bool pmu_cpu_initialised(const struct pmu_cpu *pc)
{
	return pc->initialised;
}
bool pmu_cpu_has_backend(const struct pmu_cpu *pc)
{
	return pc->ops != NULL;
}
unsigned pmu_cpu_index(const struct pmu_cpu *pc)
{
	return pc->cpu;
}
uint32_t pmu_cpu_gp_others(const struct pmu_cpu *pc)
{
	return pc->gp_reserved;
}
uint32_t pmu_cpu_fixed_others(const struct pmu_cpu *pc)
{
	return pc->fixed_reserved;
}
uint32_t pmu_cpu_gp_ours(const struct pmu_cpu *pc)
{
	return pc->gp_used;
}
uint32_t pmu_cpu_fixed_ours(const struct pmu_cpu *pc)
{
	return pc->fixed_used;
}
uint64_t pmu_cpu_global_ctrl(const struct pmu_cpu *pc)
{
	return pc->global_ctrl_shadow;
}
uint64_t pmu_cpu_fixed_ctrl(const struct pmu_cpu *pc)
{
	return pc->fixed_ctrl_shadow;
}
const struct pmu_inuse *pmu_cpu_inuse(const struct pmu_cpu *pc)
{
	return &pc->inuse;
}

const char *pmu_skip_reason(void)
{
	struct pmu_cpu *pc = pmu_this_cpu();

	if (!pc)
		return "CPU index beyond PMU_MAX_CPUS";
	if (!pc->initialised)
		return "PMU driver not initialised on this CPU (pmu_cpu_init not run)";
	return pc->counting ? NULL : pc->reason;
}

/* Two CPUs share a report block when their PMU and verdict are the same. */
static bool same_block(const struct pmu_cpu *a, const struct pmu_cpu *b)
{
	return a->initialised && b->initialised && a->ops == b->ops && pmu_caps_same(&a->caps, &b->caps) &&
	       a->counting == b->counting && strcmp(a->reason, b->reason) == 0;
}

/* "0-3,6" for the CPUs in [first, n) that share first's block. */
static void cpu_list(char *buf, size_t size, unsigned first, unsigned n)
{
	size_t len = 0;
	unsigned cpu = first;

	buf[0] = '\0';
	while (cpu < n && len < size) {
		unsigned end = cpu;
		int w;

		while (end + 1 < n && same_block(&pmu_cpus[end + 1], &pmu_cpus[first]))
			end++;
		w = end > cpu ? ksnprintf(buf + len, size - len, "%s%u-%u", len ? "," : "", cpu, end)
			      : ksnprintf(buf + len, size - len, "%s%u", len ? "," : "", cpu);
		len += w > 0 ? (size_t)w : 0;
		for (cpu = end + 1; cpu < n && !same_block(&pmu_cpus[cpu], &pmu_cpus[first]); cpu++)
			;
	}
}

struct prefixed {
	pmu_line_fn out;
	void *ctx;
};

static void prefixed_line(void *arg, const char *line)
{
	struct prefixed *p = arg;
	char buf[PMU_REASON_LEN + 128];

	ksnprintf(buf, sizeof(buf), "pmu: %s", line);
	p->out(p->ctx, buf);
}

bool pmu_inuse_found(const struct pmu_cpu *pc)
{
	const struct pmu_inuse *iu = &pc->inuse;

	return iu->read_fault || iu->gp || iu->fixed || iu->global_inuse_fault ||
	       (iu->global_inuse_valid && iu->global_inuse) ||
	       (iu->global_ctrl_valid && iu->global_ctrl != pc->caps.global_ctrl_reset);
}

void pmu_boot_report(pmu_line_fn out, void *ctx)
{
	unsigned n = pmu_hw_ncpus();
	bool done[PMU_MAX_CPUS] = { false };
	char list[128], head[PMU_REASON_LEN + 160];

	if (n > PMU_MAX_CPUS)
		n = PMU_MAX_CPUS;
	for (unsigned cpu = 0; cpu < n; cpu++) {
		const struct pmu_cpu *pc = &pmu_cpus[cpu];

		if (done[cpu])
			continue;
		if (!pc->initialised) {
			ksnprintf(head, sizeof(head), "pmu: cpu %u: not initialised", cpu);
			out(ctx, head);
			continue;
		}
		for (unsigned o = cpu; o < n; o++)
			if (same_block(&pmu_cpus[o], pc))
				done[o] = true;
		cpu_list(list, sizeof(list), cpu, n);
		ksnprintf(head, sizeof(head), "pmu: cpu %s:", list);
		out(ctx, head);
		pmu_caps_print(&pc->caps, "pmu:   ", out, ctx);
		if (pc->counting)
			ksnprintf(head, sizeof(head), "pmu:   counters count (probe on %s%d)",
				  pmu_ctr_name(&pc->caps), pc->probe_gp);
		else
			ksnprintf(head, sizeof(head), "pmu:   counting checks SKIP: %s", pc->reason);
		out(ctx, head);
	}
	unsigned quiet = 0;
	struct prefixed p = { out, ctx };
	for (unsigned cpu = 0; cpu < n; cpu++) {
		const struct pmu_cpu *pc = &pmu_cpus[cpu];
		if (!pc->initialised || !pc->ops || !pc->caps.version)
			continue;
		if (pmu_inuse_found(pc))
			pmu_inuse_report(pc, prefixed_line, &p);
		else
			quiet++;
	}
	if (quiet) {
		ksnprintf(head, sizeof(head), "pmu: no counter in use at boot on %u CPU(s)", quiet);
		out(ctx, head);
	}
}

unsigned pmu_packages(struct pmu_package *pk, unsigned max)
{
	unsigned n = 0, ncpus = pmu_hw_ncpus();

	for (unsigned cpu = 0; cpu < ncpus && cpu < PMU_MAX_CPUS; cpu++) {
		const struct pmu_cpu *pc = pmu_cpu_of(cpu);
		unsigned i;

		if (!pc->initialised)
			continue;
		for (i = 0; i < n && pk[i].id != pc->topo.package; i++)
			;
		if (i < n)
			pk[i].ncpus++;
		else if (n < max)
			pk[n++] = (struct pmu_package){ pc->topo.package, cpu, 1 };
	}
	return n;
}
