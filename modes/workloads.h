/* Named workloads for monitor mode: code whose counts a user can predict
 * and watch respond on real hardware (caches, branch predictors). Each
 * runs in timed steps so a caller can stop it at a time boundary. */
#ifndef MODES_WORKLOADS_H
#define MODES_WORKLOADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pmu_wl_kind {
	PMU_WL_LOOP,    /* pmu/loops.h's counted loop: 3 instructions, 1 branch per iteration */
	PMU_WL_CHASE,   /* pointer chase over a random cyclic permutation of 64-byte nodes */
	PMU_WL_BRANCHY, /* a PRNG bit decides a branch: about half mispredicted */
	PMU_WL_MEMCPY,  /* streaming copy from one buffer to another */
	PMU_WL_NR
};

/* What the size parameter means, per workload:
 *   loop     iterations of one run of the counted loop (its trip count: one
 *            exit mispredict per run once it exceeds the predictor's reach)
 *   chase    the working set in bytes (L1, L2, LLC or DRAM latency per hop)
 *   branchy  iterations before the bit sequence starts over: short patterns
 *            are learnt by the predictor, long ones are not
 *   memcpy   bytes of each of the two buffers */

/* Branchy loop, per iteration: a xorshift64 step (9 instructions), TEST,
 * JZ, the INC it skips half the time, DEC, JNZ. So instructions =
 * 13n + taken and branches = 2n exactly, where taken counts the
 * iterations that ran the INC (pmu_wl.taken). */
#define PMU_BRANCHY_INSNS_PER_ITER 13
#define PMU_BRANCHY_BRANCHES_PER_ITER 2

/* A chase node is one cache line, so every hop is a new line (SDM vol. 3A,
 * "Cache Structure": 64-byte lines on all current Intel and AMD parts). */
#define PMU_CHASE_NODE 64

/* Bounds on the size parameter. Memory comes from bootmem (never freed,
 * reused by later runs on the same CPU), so the ceiling keeps one run
 * from exhausting it. */
#define PMU_WL_MAX_BYTES (1ull << 30)
#define PMU_WL_MAX_ITERS (1ull << 32)

/* A timed step aims at this long: short enough that a caller checking the
 * clock between steps stops close to an interval boundary, long enough
 * that the clock reads are a small part of the work. */
#define PMU_WL_STEP_TARGET_US 200
#define PMU_WL_MAX_CHUNK (1ull << 32)

struct pmu_wl_desc {
	const char *name;      /* "loop", "chase", "branchy", "memcpy" */
	const char *size_unit; /* what size counts: "iterations" or "bytes" */
	const char *work_unit; /* what pmu_wl.work counts: "iters", "hops", "bytes" */
	uint64_t default_size, min_size, max_size;
	uint64_t first_chunk; /* work units of the first timed step */
	const char *what;     /* one line for help and the run's header */
};
extern const struct pmu_wl_desc pmu_wl_descs[PMU_WL_NR];

/* A workload instance, owned by one CPU. */
struct pmu_wl {
	enum pmu_wl_kind kind;
	uint64_t size;
	void *buf, *dst;       /* chase nodes / memcpy source; memcpy destination */
	uint64_t nodes;        /* chase: nodes in the cycle */
	const void *pos;       /* chase: the node reached so far */
	uint64_t offset;       /* memcpy: bytes of the current pass copied */
	uint64_t prng;         /* branchy: xorshift64 state (never 0) */
	uint64_t prng_start;   /* branchy: the state each pattern starts from */
	uint64_t pattern_left; /* branchy: iterations until the pattern starts over */
	uint64_t work;         /* iterations, hops or bytes done since setup */
	uint64_t taken;        /* branchy: iterations that took the INC path */
	uint64_t steps;
	uint64_t chunk;     /* work units per timed step, adapted to the CPU's speed */
	uint64_t target_us; /* what a timed step aims at */
};

/* Where a workload's memory and time come from: in the kernel
 * bootmem_alloc() (zeroed, never freed) and uptime_us(); host tests pass
 * their own. The workloads themselves touch no kernel service, so this
 * file builds into every host test that links pmu/. */
struct pmu_wl_env {
	void *(*alloc)(size_t size);
	uint64_t (*now_us)(void);
};

/* The kind named name, or -1. */
int pmu_wl_find(const char *name);

/* Prepare w to run on CPU cpu with the given size (0: the default); memory
 * comes from env->alloc and is kept per CPU for reuse by later setups.
 * seed makes the chase permutation and branchy's bits (deterministic for a
 * given seed). Returns 0, or -1 with err saying why (size out of range). */
int pmu_wl_setup(struct pmu_wl *w, const struct pmu_wl_env *env, enum pmu_wl_kind kind, uint64_t size,
		 unsigned cpu, uint64_t seed, char *err, size_t errlen);

/* Do n units of work (n >= 1): iterations, hops or bytes. The loop runs
 * whole loops of size iterations, so it may do up to size - 1 more. */
void pmu_wl_step(struct pmu_wl *w, uint64_t n);

/* One step of w->chunk units, timed: the chunk doubles while a step takes
 * under half of w->target_us and halves while it takes over twice that,
 * so steps stay short on a slow CPU (an emulator) and cheap on a fast one. */
void pmu_wl_step_timed(struct pmu_wl *w, const struct pmu_wl_env *env);

/* Timed steps until env->now_us() reaches until_us (at least one step). */
void pmu_wl_run_until(struct pmu_wl *w, const struct pmu_wl_env *env, uint64_t until_us);

/* The deterministic generator the workloads use: splitmix64 (Steele,
 * Lea, Flood, "Fast splittable pseudorandom number generators", 2014). */
static inline uint64_t pmu_wl_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Link n nodes of PMU_CHASE_NODE bytes at base into one random cycle
 * (Sattolo's algorithm: every permutation it makes is a single n-cycle),
 * each node's first word pointing at the next node. n >= 1. */
void pmu_wl_chase_build(void *base, uint64_t n, uint64_t seed);

#endif
