/* Control-register and RFLAGS bits, as bit numbers so that C (BIT(n)) and
 * the boot assembly ((1 << n)) share one definition of each. EFER is an
 * MSR: its bits are in arch/x86/msr.h. */
#ifndef ARCH_X86_REGS_H
#define ARCH_X86_REGS_H

/* CR0 (SDM vol. 3A, 2.5 "Control Registers"). */
#define CR0_PE_BIT 0  /* protection enable */
#define CR0_MP_BIT 1  /* monitor coprocessor */
#define CR0_ET_BIT 4  /* extension type (reads as 1) */
#define CR0_NE_BIT 5  /* native x87 error reporting */
#define CR0_WP_BIT 16 /* write protect, also at CPL 0 */
#define CR0_NW_BIT 29 /* not write-through */
#define CR0_CD_BIT 30 /* cache disable */
#define CR0_PG_BIT 31 /* paging */

/* CR4 (SDM vol. 3A, 2.5 "Control Registers"). */
#define CR4_PAE_BIT 5 /* physical address extension: required for long mode */
#define CR4_PCE_BIT 8 /* RDPMC allowed at CPL > 0 */

/* RFLAGS (SDM vol. 1, 3.4.3 "EFLAGS Register"). */
#define RFLAGS_IF_BIT 9 /* maskable interrupts enabled */

#endif
