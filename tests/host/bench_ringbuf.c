/* Host benchmark of lib/ringbuf.c: nanoseconds per sample record written
 * (rb_write) and per record drained (rb_read), median of 5 runs with the
 * min-max, printed as one table row. Build it optimised and without
 * sanitizers for numbers worth comparing (see tests/host/host.mk). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/ringbuf.h"
#include "pmu/sample_record.h"

#define RUNS 5
#define RECORDS 2000000u
#define RING_BYTES (64u * 1024) /* 16 pages, like a modest perf mmap */
#define NR_VALUES 2u            /* a sample carrying two group counters */

static unsigned records_per_run; /* RECORDS rounded up to whole batches */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One run: fill the ring to ~90 % with samples, drain it, repeat. Each
 * batch is timed as a whole so the clock read is amortised over hundreds of
 * records; the producer and consumer alternate on one thread, so this is
 * the cost of the code path, not of cache-line transfer between CPUs. */
static void bench_run(uint64_t *write_ps, uint64_t *drain_ps, uint64_t *checksum)
{
	static struct rb rb;
	static struct rb_control ctl;
	static _Alignas(64) uint8_t data[RING_BYTES];
	_Alignas(8) uint8_t rec[sizeof(struct pmu_sample) + NR_VALUES * sizeof(struct pmu_sample_value)];
	_Alignas(8) uint8_t out[512];
	struct pmu_sample *smp = (struct pmu_sample *)rec;
	size_t size = pmu_sample_size(NR_VALUES);
	unsigned batch = (unsigned)(RING_BYTES / size * 9 / 10);
	uint64_t wt = 0, dt = 0, sum = 0;

	if (rb_init(&rb, &ctl, data, sizeof(data), NULL) != RB_OK) {
		fprintf(stderr, "bench_ringbuf: rb_init failed\n");
		exit(1);
	}
	memset(rec, 0, sizeof(rec));
	smp->cpu = 1;
	smp->idx = 32;
	smp->period = 100000;
	smp->nr_values = NR_VALUES;
	for (unsigned done = 0; done < RECORDS; done += batch) {
		uint64_t t0 = now_ns();
		for (unsigned i = 0; i < batch; i++) {
			smp->tsc = done + i;
			smp->rip = 0xffffffff80100000u + i * 16;
			if (rb_write(&rb, RB_RECORD_SAMPLE, 0, rec + sizeof(struct rb_header),
				     size - sizeof(struct rb_header)) < 0) {
				fprintf(stderr, "bench_ringbuf: unexpected drop\n");
				exit(1);
			}
		}
		uint64_t t1 = now_ns();
		for (unsigned i = 0; i < batch; i++) {
			if (rb_read(&rb, out, sizeof(out)) != (int)size) {
				fprintf(stderr, "bench_ringbuf: short drain\n");
				exit(1);
			}
			sum += ((struct pmu_sample *)out)->tsc;
		}
		uint64_t t2 = now_ns();
		wt += t1 - t0;
		dt += t2 - t1;
	}
	/* Picoseconds per record, so the table keeps one decimal of ns. */
	records_per_run = (RECORDS + batch - 1) / batch * batch;
	*write_ps = wt * 1000 / records_per_run;
	*drain_ps = dt * 1000 / records_per_run;
	*checksum += sum;
}

int main(void)
{
	uint64_t w[RUNS], d[RUNS], checksum = 0;
	const char *note = "";

#if defined(__SANITIZE_ADDRESS__)
	note = " (sanitizer build: not representative)";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	note = " (sanitizer build: not representative)";
#endif
#endif
	for (int i = 0; i < RUNS; i++)
		bench_run(&w[i], &d[i], &checksum);
	qsort(w, RUNS, sizeof(w[0]), cmp_u64);
	qsort(d, RUNS, sizeof(d[0]), cmp_u64);
	printf("| ringbuf (host) | write %llu.%llu ns/record (%llu.%llu-%llu.%llu) | "
	       "drain %llu.%llu ns/record (%llu.%llu-%llu.%llu) | median of %d runs, %u %zu-byte "
	       "samples, %u KiB ring%s |\n",
	       (unsigned long long)w[RUNS / 2] / 1000, (unsigned long long)w[RUNS / 2] % 1000 / 100,
	       (unsigned long long)w[0] / 1000, (unsigned long long)w[0] % 1000 / 100,
	       (unsigned long long)w[RUNS - 1] / 1000, (unsigned long long)w[RUNS - 1] % 1000 / 100,
	       (unsigned long long)d[RUNS / 2] / 1000, (unsigned long long)d[RUNS / 2] % 1000 / 100,
	       (unsigned long long)d[0] / 1000, (unsigned long long)d[0] % 1000 / 100,
	       (unsigned long long)d[RUNS - 1] / 1000, (unsigned long long)d[RUNS - 1] % 1000 / 100, RUNS,
	       records_per_run, pmu_sample_size(NR_VALUES), RING_BYTES / 1024, note);
	return checksum == 0; /* all tsc fields were summed: never 0 */
}
