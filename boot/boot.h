/* Constants shared by the boot assembly and the C that continues it. */
#ifndef BOOT_BOOT_H
#define BOOT_BOOT_H

#define BOOT_CS64 0x08
#define BOOT_DS 0x10
#define BOOT_CS32 0x18
#define BOOT_PT_PAGES 6		/* PML4 + PDPT + 4 page directories */
/* Tests run on these stacks: 64 KiB leaves room for the deepest test
 * paths (the compiler refuses frames over 4 KiB: -Wframe-larger-than). */
#define BOOT_STACK_SIZE 65536
#define AP_BOOT_STACK_SIZE 65536

/* Page-table entry bits (SDM vol. 3A, 4.5 "4-Level Paging", tables 4-15..4-20). */
#define PTE_P 0x001
#define PTE_W 0x002
#define PTE_U 0x004
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_PS 0x080

#define CR4_PAE 0x20
#define MSR_EFER_NUM 0xc0000080
#define EFER_LME 0x100
/* CR0: PG(31) WP(16) NE(5) ET(4) MP(1) PE(0) (SDM vol. 3A, 2.5). */
#define CR0_BOOT_VALUE 0x80010033

#ifndef __ASSEMBLY__
#include <stdint.h>
extern uint64_t boot_pml4[512], boot_pdpt[512], boot_pd[4 * 512];
extern uint8_t boot_stack_top[];
extern uint32_t boot_magic, boot_info_phys, ap_next_stack_slot, ap_stack_slots;
extern uint64_t ap_boot_stacks;
extern uint8_t _kernel_start[], _kernel_end[], _load_end[], _bss_start[], _bss_end[];
extern uint8_t __trampoline_start[], __trampoline_end[];
void kmain(uint32_t magic, uint32_t info_phys);
void ap_main(void);
void ap_entry32(void);
#endif

#endif
