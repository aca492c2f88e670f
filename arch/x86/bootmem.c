/* Bump allocation over the memory map, region by region. */
#include "arch/x86/bootmem.h"

#include <stdbool.h>

#include "arch/x86/cpu.h"
#include "arch/x86/sections.h"
#include "arch/x86/traps.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#define PAGE 4096ull
#define MAX_REGIONS 32

struct region {
	uint64_t next, end;
};
static struct region regions[MAX_REGIONS];
static unsigned nregions, current;
static uint64_t used;
static struct spinlock lock;

void bootmem_init(const struct mem_region *map, size_t n, uint64_t mapped_end)
{
	uint64_t floor = (uint64_t)_kernel_end;
	if (floor < (1ull << 20))
		floor = 1ull << 20;
	for (size_t i = 0; i < n && nregions < MAX_REGIONS; i++) {
		const struct mem_region *m = &map[i];
		if (m->type != MEM_AVAILABLE)
			continue;
		uint64_t start = m->base, end = m->base + m->len;
		if (start < floor)
			start = floor;
		if (end > mapped_end)
			end = mapped_end;
		start = (start + PAGE - 1) & ~(PAGE - 1);
		end &= ~(PAGE - 1);
		if (start + PAGE <= end)
			regions[nregions++] = (struct region){ start, end };
	}
}

void *bootmem_alloc(size_t size)
{
	uint64_t want = (size + PAGE - 1) & ~(PAGE - 1);
	void *p = NULL;

	/* Interrupts off while holding the lock, and the real owner recorded:
	 * a test aborted by its watchdog can never leave it held. */
	bool irq = irq_save();
	spin_lock(&lock, this_cpu()->cpu);
	while (current < nregions) {
		struct region *r = &regions[current];
		if (r->end - r->next >= want) {
			p = (void *)r->next;
			r->next += want;
			used += want;
			break;
		}
		current++; /* too small for this request: later ones go on from the next */
	}
	spin_unlock(&lock);
	irq_restore(irq);
	if (!p)
		panic("out of boot memory asking for %zu bytes (%lu bytes in use)", size, used);
	memset(p, 0, want);
	return p;
}

uint64_t bootmem_used(void)
{
	return used;
}
