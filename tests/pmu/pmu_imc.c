/* Memory-controller check, once per package from its first CPU: a stream
 * over flushed lines, read and then written back, against the CAS reads
 * and writes of the package's memory controller (pmu/intel/imc.c). */
#include "arch/x86/bootmem.h"
#include "arch/x86/cpu.h"
#include "arch/x86/smp.h"
#include "lib/printf.h"
#include "pmu/intel/imc.h"
#include "pmu/pmu.h"
#include "pmu/pmu_hw.h"
#include "tests/ktest.h"
#include "tests/pmu/pmu_common.h"

/* The stream: 256 Ki lines (16 MiB), far more than the bounds' slack. */
#define IMC_LINES (256u << 10)
#define LINE 64
/* Lines the bounds allow besides the stream's and the background's: the
 * prefetchers running past its end (the streamer stays inside a 4 KiB
 * page: 64 lines), the window code's own lines, and, for writes, a memory
 * controller's write queue still holding flushed lines when the window
 * closes (tens of entries a channel). */
#define IMC_SLACK 1024

struct imc_pkg {
	struct pmu_package pk;
	struct pmu_imc m;
	int err;
	/* Results, in counts: the read phase, the write phase, and idle
	 * windows as long as each (the background the platform adds). */
	struct pmu_imc_counts rd, wr, rd_idle, wr_idle;
	uint64_t rd_tsc, wr_tsc;
	char why[PMU_REASON_LEN];
};

static struct imc_pkg ipkgs[PMU_MAX_PACKAGES];
static unsigned nipkgs;
static uint8_t *imc_buf;

static void detect_here(void *arg)
{
	struct imc_pkg *p = arg;

	pmu_cpu_ensure();
	p->err = pmu_imc_detect(&p->m, pmu_caps());
}

/* A client platform has one memory controller, the host bridge's: it is
 * counted from package 0 only. */
static bool platform_imc(const struct imc_pkg *p)
{
	return p->m.model && p->m.model->kind == PMU_IMC_MCHBAR;
}

static const char *imc_needs(void)
{
	struct pmu_package pk[PMU_MAX_PACKAGES];

	if (!pmu_cpu_ensure())
		return "CPU index beyond PMU_MAX_CPUS";
	for (unsigned cpu = 0; cpu < smp_num_cpus(); cpu++)
		pmu_test_init_cpu(cpu);
	nipkgs = pmu_packages(pk, PMU_MAX_PACKAGES);
	for (unsigned i = 0; i < nipkgs; i++) {
		ipkgs[i] = (struct imc_pkg){ .pk = pk[i] };
		on_cpu(pk[i].lead, detect_here, &ipkgs[i]);
	}
	if (!nipkgs)
		return "no initialised CPU";
	if (ipkgs[0].err != PMU_OK)
		return ktest_reason("%s", ipkgs[0].m.why);
	return NULL;
}

static void flush(const uint8_t *b, uint64_t lines)
{
	for (uint64_t i = 0; i < lines; i++)
		__asm__ volatile("clflush %0" ::"m"(b[i * LINE]));
	mb();
}

/* One load a line, in order: the line comes from DRAM (it was flushed). */
static uint64_t read_stream(const uint8_t *b, uint64_t lines)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < lines; i++)
		sum += *(const volatile uint64_t *)&b[i * LINE];
	return sum;
}

/* One store a line (its RFO reads the line), then CLFLUSH writes it back
 * (SDM vol. 2A, CLFLUSH: "if that cache line contains modified data ...
 * the data is written back to memory"); MFENCE orders the flushes. */
static void write_stream(uint8_t *b, uint64_t lines)
{
	for (uint64_t i = 0; i < lines; i++) {
		*(volatile uint64_t *)&b[i * LINE] = i;
		__asm__ volatile("clflush %0" : "+m"(b[i * LINE]));
	}
	mb();
}

/* A window of `ticks` TSC ticks in which this CPU touches no memory. */
static void idle_window(const struct pmu_imc *m, uint64_t ticks, struct pmu_imc_counts *k, int *err)
{
	uint64_t t0;

	if ((*err = pmu_imc_begin(m, k)) != PMU_OK)
		return;
	t0 = rdtsc();
	while (rdtsc() - t0 < ticks)
		cpu_relax();
	*err = pmu_imc_end(m, k);
}

static void stream_here(void *arg)
{
	struct imc_pkg *p = arg;
	uint64_t t0, sink;
	bool irq;
	int err;

	p->why[0] = '\0';
	flush(imc_buf, IMC_LINES);
	irq = irq_save();
	if ((err = pmu_imc_begin(&p->m, &p->rd)) == PMU_OK) {
		t0 = rdtsc();
		sink = read_stream(imc_buf, IMC_LINES);
		p->rd_tsc = rdtsc() - t0;
		err = pmu_imc_end(&p->m, &p->rd);
		(void)sink;
	}
	if (err == PMU_OK)
		idle_window(&p->m, p->rd_tsc, &p->rd_idle, &err);
	irq_restore(irq);
	flush(imc_buf, IMC_LINES);
	irq = irq_save();
	if (err == PMU_OK && (err = pmu_imc_begin(&p->m, &p->wr)) == PMU_OK) {
		t0 = rdtsc();
		write_stream(imc_buf, IMC_LINES);
		p->wr_tsc = rdtsc() - t0;
		err = pmu_imc_end(&p->m, &p->wr);
	}
	if (err == PMU_OK)
		idle_window(&p->m, p->wr_tsc, &p->wr_idle, &err);
	irq_restore(irq);
	if (err != PMU_OK)
		ksnprintf(p->why, sizeof(p->why), "reading the memory-controller counters failed (%d)", err);
}

/* Lines a count stands for, at least and at most (bytes per count). */
static uint64_t lines_lo(const struct pmu_imc *m, uint64_t c)
{
	return c * m->model->bytes_min / LINE;
}
static uint64_t lines_hi(const struct pmu_imc *m, uint64_t c)
{
	return c * m->model->bytes_max / LINE;
}

/* Check that count c (of what) covers at least `lo` lines and at most the
 * stream's plus twice the idle window's background plus the slack. */
static void check_lines(const struct imc_pkg *p, const char *phase, const char *what, uint64_t c,
			uint64_t idle, uint64_t lo)
{
	uint64_t hi = IMC_LINES + 2 * lines_hi(&p->m, idle) + IMC_SLACK;

	check(lines_hi(&p->m, c) >= lo,
	      "package %u %s: %s %lu (x %u-%u bytes) cover fewer than the %lu lines expected (%u streamed)",
	      p->pk.id, phase, what, c, p->m.model->bytes_min, p->m.model->bytes_max, lo, IMC_LINES);
	check(lines_lo(&p->m, c) <= hi,
	      "package %u %s: %s %lu (x %u-%u bytes) exceed %lu lines (%u streamed + 2 x %lu idle + %u)",
	      p->pk.id, phase, what, c, p->m.model->bytes_min, p->m.model->bytes_max, hi, IMC_LINES, idle,
	      IMC_SLACK);
}

struct ctl_result {
	const struct pmu_imc *m;
	unsigned checked, bad;
	char first_bad[PMU_REASON_LEN];
	unsigned fixed_checked, fixed_bad;
	char fixed_first_bad[PMU_REASON_LEN];
};

/* A fixed (DCLK) counter the windows never enabled: its box was reset
 * (controls and counters) before each window and is frozen since the
 * last one, so its control reads 0 and the counter 0, read whole or as
 * two dwords. */
static void fixed_idle(struct ctl_result *r, unsigned c)
{
	uint32_t ctl, half[2];
	uint64_t q;
	int err = pmu_imc_fixed_read(r->m, c, &ctl, &q, half);

	if (err == PMU_E_INVAL)
		return;
	r->fixed_checked++;
	if ((err || ctl || q || half[0] || half[1]) && !r->fixed_bad++)
		ksnprintf(r->fixed_first_bad, sizeof(r->fixed_first_bad),
			  "channel %u: %s; fixed control %#x, counter %#lx (dwords %#x %#x)", c,
			  err ? "faulted" : "not 0", ctl, q, half[0], half[1]);
}

static void ctl_here(void *arg)
{
	struct ctl_result *r = arg;

	for (unsigned c = 0; c < pmu_imc_nchan(r->m); c++)
		fixed_idle(r, c);
	for (unsigned c = 0; c < pmu_imc_nchan(r->m); c++)
		for (unsigned i = 0; i < 4; i++) {
			/* An event and unit mask, no enable bit: nothing counts. */
			uint32_t v = (0x5au ^ c) | (0xa5u ^ i) << 8, back = 0;
			int err = pmu_imc_ctl_roundtrip(r->m, c, i, v, &back);

			if (err == PMU_E_INVAL)
				continue;
			r->checked++;
			if ((err || back != v) && !r->bad++)
				ksnprintf(r->first_bad, sizeof(r->first_bad),
					  "channel %u counter control %u: wrote %#x, %s %#x", c, i, v,
					  err ? "faulted" : "read back", back);
		}
}

/*
 * Read phase: every line of a flushed 16 MiB buffer loaded once, in order,
 * interrupts off: each line must come from DRAM, so the CAS reads cover at
 * least IMC_LINES lines; and at most those, the prefetchers' overrun and
 * twice the background an idle window of the same length saw; its CAS
 * writes no more than that background. Write phase:
 * each line stored once (an RFO read) and flushed (a write back): reads as
 * above, writes at least IMC_LINES - IMC_SLACK (a write queue may still
 * hold some when the window closes) and at most as reads. Counters 2 and
 * 3 of every channel count the reads and writes too: within IMC_SLACK of
 * counters 0 and 1. Every channel's four counter controls (Linux
 * skx_uncore_imc and the discovery IMC units: 4 counters a channel) hold
 * an event and unit mask written without the enable bit. Where the row
 * places a fixed DCLK counter (Sapphire Rapids' channels, Linux
 * spr_uncore_imc), the windows never enable it and reset its box first
 * (uncore_discovery.h GENERIC_PMON_BOX_CTL_RST_CTRL/_RST_CTRS): its
 * control and counter read 0, the counter whole and as two dwords.
 */
KTEST("pmu.imc", cas_reads_writes_of_a_stream, imc_needs, 0,
      "CAS reads/writes cover a flushed stream's lines, bounded, per package")
{
	if (!imc_buf)
		imc_buf = bootmem_alloc((uint64_t)IMC_LINES * LINE);
	for (unsigned i = 0; i < nipkgs; i++) {
		struct imc_pkg *p = &ipkgs[i];

		if (i > 0 && platform_imc(&ipkgs[0])) {
			diag("package %u: the client memory controller is the platform's, counted from package %u",
			     p->pk.id, ipkgs[0].pk.id);
			continue;
		}
		if (!check(p->err == PMU_OK, "package %u (CPU %u): %s", p->pk.id, p->pk.lead, p->m.why))
			continue;
		on_cpu(p->pk.lead, stream_here, p);
		if (!check(!p->why[0], "package %u (CPU %u): %s", p->pk.id, p->pk.lead, p->why))
			continue;
		diag("package %u (CPU %u): %s, %s; %s", p->pk.id, p->pk.lead, p->m.model->name,
		     p->m.model->what, platform_imc(p) ? "MCHBAR" : "channels");
		for (unsigned u = 0; p->m.model->kind == PMU_IMC_DISCOVERY && u < p->m.nunits; u++)
			diag("package %u: channel %u from the discovery table of %02x:%02x.%x: %s %#llx, controls +%#x, "
			     "counters +%#x",
			     p->pk.id, p->m.unit[u].id, p->m.table_bus, p->m.table_dev, p->m.table_fn,
			     pmu_disc_access_name(p->m.unit[u].access), (unsigned long long)p->m.unit[u].ctl,
			     p->m.unit[u].ctl_off, p->m.unit[u].ctr_off);
		diag("package %u: read %u lines: CAS reads %lu writes %lu (idle window: %lu / %lu; %lu TSC ticks)",
		     p->pk.id, IMC_LINES, p->rd.reads, p->rd.writes, p->rd_idle.reads, p->rd_idle.writes,
		     p->rd_tsc);
		diag("package %u: wrote and flushed %u lines: CAS reads %lu writes %lu (idle window: %lu / %lu; %lu "
		     "TSC ticks)",
		     p->pk.id, IMC_LINES, p->wr.reads, p->wr.writes, p->wr_idle.reads, p->wr_idle.writes,
		     p->wr_tsc);
		check_lines(p, "read phase", "CAS reads", p->rd.reads, p->rd_idle.reads, IMC_LINES);
		check(lines_lo(&p->m, p->rd.writes) <= 2 * lines_hi(&p->m, p->rd_idle.writes) + IMC_SLACK,
		      "package %u read phase: CAS writes %lu exceed the background (2 x %lu idle + %u lines): reads "
		      "counted as writes?",
		      p->pk.id, p->rd.writes, p->rd_idle.writes, IMC_SLACK);
		check_lines(p, "write phase", "CAS reads (RFO)", p->wr.reads, p->wr_idle.reads, IMC_LINES);
		check_lines(p, "write phase", "CAS writes", p->wr.writes, p->wr_idle.writes,
			    IMC_LINES - IMC_SLACK);
		if (pmu_imc_nchan(&p->m)) {
			struct ctl_result r = { .m = &p->m };
			on_cpu(p->pk.lead, ctl_here, &r);
			check(r.checked > 0 && r.bad == 0,
			      "package %u: %u of %u channel counter controls did not hold a write; first: %s",
			      p->pk.id, r.bad, r.checked, r.first_bad);
			check(r.fixed_bad == 0,
			      "package %u: %u of %u channels' fixed counters, never enabled, are not 0 after a reset; first: %s",
			      p->pk.id, r.fixed_bad, r.fixed_checked, r.fixed_first_bad);
		}
		/* Counters 2 and 3 counted the same events over the same
		 * windows as 0 and 1 (one box freeze starts and stops them). */
		const struct pmu_imc_counts *ph[] = { &p->rd, &p->wr };
		for (unsigned k = 0; k < 2; k++) {
			const struct pmu_imc_counts *c = ph[k];
			if (!c->second)
				continue;
			diag("package %u %s phase: counters 2/3: CAS reads %lu writes %lu", p->pk.id,
			     k ? "write" : "read", c->reads2, c->writes2);
			check((c->reads2 > c->reads ? c->reads2 - c->reads : c->reads - c->reads2) <=
					      IMC_SLACK &&
				      (c->writes2 > c->writes ? c->writes2 - c->writes
							      : c->writes - c->writes2) <= IMC_SLACK,
			      "package %u %s phase: counters 2/3 read %lu/%lu CAS reads/writes, counters 0/1 %lu/%lu (expected within %u)",
			      p->pk.id, k ? "write" : "read", c->reads2, c->writes2, c->reads, c->writes,
			      IMC_SLACK);
		}
	}
}
