/* Interrupt vectors: the architecture's exception numbers with their names,
 * and the vectors pmutest assigns to its interrupts. The one place that
 * knows 13 is #GP; host-linkable (the PMU driver names faults with it). */
#ifndef ARCH_X86_VECTORS_H
#define ARCH_X86_VECTORS_H

/* Exceptions (SDM vol. 3A, 7.3 "Sources of Interrupts", table "Protected-
 * Mode Exceptions and Interrupts"). */
enum {
	X86_VEC_DE = 0,
	X86_VEC_DB = 1,
	X86_VEC_NMI = 2,
	X86_VEC_BP = 3,
	X86_VEC_OF = 4,
	X86_VEC_BR = 5,
	X86_VEC_UD = 6,
	X86_VEC_NM = 7,
	X86_VEC_DF = 8,
	X86_VEC_TS = 10,
	X86_VEC_NP = 11,
	X86_VEC_SS = 12,
	X86_VEC_GP = 13,
	X86_VEC_PF = 14,
	X86_VEC_MF = 16,
	X86_VEC_AC = 17,
	X86_VEC_MC = 18,
	X86_VEC_XM = 19,
	X86_VEC_VE = 20,
	X86_VEC_CP = 21,
	X86_VEC_HV = 28,
	X86_VEC_VC = 29,
	X86_VEC_SX = 30,
	X86_NR_EXCEPTIONS = 32,
};

/* pmutest's own vectors, above the 32 exceptions. */
enum {
	VEC_TIMER = 0x20,    /* LAPIC timer: the per-test watchdog */
	VEC_CALL = 0xf0,     /* on_cpu() cross-CPU call */
	VEC_PMI = 0xf1,      /* LVT performance-counter entry, fixed delivery */
	VEC_SPURIOUS = 0xff, /* LAPIC spurious-interrupt vector (low nibble 0xf) */
};

/* "#GP general protection"; "reserved exception" below 32 for a number
 * without a name, "interrupt" above. */
const char *x86_vector_name(unsigned vector);
/* "#GP": the mnemonic alone (the name up to its first space); `other` for
 * anything that has none. */
const char *x86_vector_mnemonic(unsigned vector, const char *other);

#endif
