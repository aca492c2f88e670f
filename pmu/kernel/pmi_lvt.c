/* PMI delivery on x86: the LVT performance-counter entry of each CPU's
 * local APIC, the fixed-vector and NMI handlers around pmu_pmi_handle(),
 * and the re-arming every delivered PMI needs. */
#include "pmu/kernel/pmi_lvt.h"

#include "arch/x86/cpu.h"
#include "arch/x86/lapic.h"
#include "arch/x86/percpu.h"
#include "arch/x86/traps.h"
#include "lib/printf.h"
#include "pmu/pmu.h"

struct pmi_percpu {
	bool ready;
	enum pmi_delivery mode;
	uint64_t count[2];
	uint64_t cost_total, cost_max; /* TSC ticks from handler entry to the re-arm (and EOI) */
	uint64_t last_entry;           /* TSC at the last handler entry (the cost map's PMI latency) */
};

static struct pmi_percpu pmi_percpu[MAX_CPUS];
static bool pmi_registered;
static enum pmi_delivery pmi_boot_delivery = PMI_DELIVERY_FIXED;

static struct pmi_percpu *pmi_mine(void)
{
	return &pmi_percpu[this_cpu()->cpu];
}

uint32_t pmi_lvt_value(enum pmi_delivery d)
{
	/* NMI delivery ignores the vector field (SDM vol. 3A, "Local Vector
	 * Table", delivery mode 100B). */
	return d == PMI_DELIVERY_NMI ? APIC_DM_NMI : VEC_PMI;
}

uint32_t pmi_lvt_read(void)
{
	return lapic_read(LAPIC_LVT_PERF);
}

const char *pmi_delivery_name(enum pmi_delivery d)
{
	return d == PMI_DELIVERY_NMI ? "nmi" : "fixed";
}

static unsigned pmi_from(const struct trap_frame *f)
{
	/* The saved CS's RPL is the interrupted code's CPL (SDM vol. 3A, 6.14.2
	 * "64-Bit Mode Stack Frame"). */
	return (f->cs & 3) == 3 ? PMU_PMI_FROM_USER : 0;
}

/* The processor sets the LVT entry's mask bit when it delivers a PMI (SDM
 * vol. 3B, "Generating an Interrupt on Overflow"): no further PMI comes
 * until it is cleared. Re-arm after the handler cleared the status, so
 * the overflows it handled cannot raise a second PMI. */
static void pmi_rearm(const struct pmi_percpu *p)
{
	lapic_write(LAPIC_LVT_PERF, pmi_lvt_value(p->mode));
}

/* The handler's own cost, for `make bench` on hardware: TSC ticks from
 * entering the C handler to the re-arm (the entry stub and IRET are not in
 * it). */
static void pmi_account(struct pmi_percpu *p, uint64_t t0)
{
	uint64_t dt = rdtsc() - t0;
	p->cost_total += dt;
	if (dt > p->cost_max)
		p->cost_max = dt;
}

static void pmi_irq(struct trap_frame *f)
{
	struct pmi_percpu *p = pmi_mine();
	uint64_t t0 = rdtsc();

	p->last_entry = t0;
	p->count[PMI_DELIVERY_FIXED]++;
	pmu_pmi_handle(f->rip, pmi_from(f));
	pmi_rearm(p);
	lapic_eoi();
	pmi_account(p, t0);
}

/* NMIs have no vector to tell a PMI apart: in NMI mode this CPU's handler
 * claims the NMI when GLOBAL_STATUS showed an overflow. An NMI that finds
 * none is counted as a spurious PMI and left unclaimed for traps.c to
 * count too. No EOI: NMI delivery does not use the ISR (SDM vol. 3A,
 * "EOI Register"). */
static bool pmi_nmi(struct trap_frame *f)
{
	struct pmi_percpu *p = pmi_mine();
	uint64_t status;

	if (!p->ready || p->mode != PMI_DELIVERY_NMI)
		return false;
	uint64_t t0 = rdtsc();
	p->last_entry = t0;
	p->count[PMI_DELIVERY_NMI]++;
	status = pmu_pmi_handle(f->rip, pmi_from(f) | PMU_PMI_FROM_NMI);
	pmi_rearm(p);
	pmi_account(p, t0);
	return status != 0;
}

int pmi_set_delivery(enum pmi_delivery d)
{
	struct pmi_percpu *p = pmi_mine();
	uint32_t want = pmi_lvt_value(d);

	/* The mode first: the NMI handler must recognise the first PMI. */
	p->mode = d;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	lapic_write(LAPIC_LVT_PERF, want);
	return (pmi_lvt_read() & LAPIC_LVT_WRITABLE) == want ? 0 : -1;
}

enum pmi_delivery pmi_delivery(void)
{
	return pmi_mine()->mode;
}

bool pmi_ready(void)
{
	return pmi_mine()->ready;
}

uint64_t pmi_count(unsigned cpu, enum pmi_delivery d)
{
	if (cpu >= MAX_CPUS || (unsigned)d > PMI_DELIVERY_NMI)
		return 0;
	return __atomic_load_n(&pmi_percpu[cpu].count[d], __ATOMIC_RELAXED);
}

void pmi_cost(unsigned cpu, uint64_t *mean, uint64_t *max)
{
	const struct pmi_percpu *p = &pmi_percpu[cpu < MAX_CPUS ? cpu : 0];
	uint64_t n = p->count[PMI_DELIVERY_FIXED] + p->count[PMI_DELIVERY_NMI];
	*mean = n ? p->cost_total / n : 0;
	*max = p->cost_max;
}

uint64_t pmi_last_entry_tsc(unsigned cpu)
{
	return cpu < MAX_CPUS ? __atomic_load_n(&pmi_percpu[cpu].last_entry, __ATOMIC_RELAXED) : 0;
}

void pmi_configure(enum pmi_delivery d)
{
	pmi_boot_delivery = d == PMI_DELIVERY_NMI ? PMI_DELIVERY_NMI : PMI_DELIVERY_FIXED;
}

void pmi_init_cpu(void)
{
	struct pmi_percpu *p = pmi_mine();

	/* The handlers are global; the first CPU here installs them. */
	if (!__atomic_exchange_n(&pmi_registered, true, __ATOMIC_ACQ_REL)) {
		irq_set_handler(VEC_PMI, pmi_irq);
		nmi_register(pmi_nmi);
	}
	pmi_set_delivery(pmi_boot_delivery);
	p->ready = true;
}

const char *pmi_check_delivery(char *buf, size_t len)
{
	if (!pmi_ready())
		pmi_init_cpu();
	if (pmi_set_delivery(pmi_delivery()) == 0)
		return NULL;
	ksnprintf(buf, len, "LVT performance-counter entry reads %#x after writing %#x: no PMI delivery",
		  pmi_lvt_read(), pmi_lvt_value(pmi_delivery()));
	return buf;
}
