/* Identity map above 4 GiB: 1 GiB pages when CPUID.80000001H:EDX[26]
 * (SDM vol. 3A, 4.5.4) says they exist, else 2 MiB pages from a small
 * static pool of page directories. */
#include "arch/x86/paging.h"

#include "arch/x86/cpu.h"

#define GIB (1ull << 30)
#define EXTRA_PDS 28 /* 2 MiB pages for up to 32 GiB without 1 GiB pages */

static uint64_t extra_pd[EXTRA_PDS][512] __attribute__((aligned(4096)));
static uint64_t mapped_end = 4 * GIB;

uint64_t paging_mapped_end(void)
{
	return mapped_end;
}

uint64_t paging_extend(uint64_t *pdpt, uint64_t ram_end)
{
	bool gib_pages = cpuid(0x80000000).eax >= 0x80000001 &&
			 (cpuid(0x80000001).edx & BIT(CPUID_80000001_EDX_PDPE1GB_BIT));
	/* One PDPT covers 512 GiB: enough for a test kernel. */
	uint64_t limit = ram_end < 512 * GIB ? ram_end : 512 * GIB;

	for (unsigned i = 4; (uint64_t)i * GIB < limit; i++) {
		uint64_t base = (uint64_t)i * GIB;
		if (gib_pages) {
			pdpt[i] = base | PTE_P | PTE_W | PTE_U | PTE_PS;
		} else {
			if (i - 4 >= EXTRA_PDS)
				break;
			uint64_t *pd = extra_pd[i - 4];
			for (unsigned j = 0; j < 512; j++)
				pd[j] = (base + ((uint64_t)j << 21)) | PTE_P | PTE_W | PTE_U | PTE_PS;
			pdpt[i] = (uint64_t)pd | PTE_P | PTE_W | PTE_U;
		}
		mapped_end = base + GIB;
	}
	write_cr3(read_cr3()); /* flush: PDPT entries went from absent to present */
	return mapped_end;
}
