/* Running a payload at CPL 3, for USR/OS filtering and CR4.PCE checks. */
#ifndef ARCH_X86_USERMODE_H
#define ARCH_X86_USERMODE_H

/* Run fn(arg) in ring 3 on a per-CPU user stack (it may execute any
 * kernel-linked code: all pages are user-accessible, SMEP/SMAP are off).
 * Returns -1 when fn returned normally, else the vector of the exception
 * it raised at CPL 3 (e.g. 13 for RDPMC with CR4.PCE clear). Interrupts
 * stay enabled in ring 3. */
int usermode_call(void (*fn)(void *), void *arg);

/* The UD2 a returning payload executes: usermode_call() reads an #UD there
 * as "returned". */
extern const char usermode_exit[];

#endif
