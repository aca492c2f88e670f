/* Exception names, for register dumps and for the reasons that name a
 * faulting register access. */
#include "arch/x86/vectors.h"

#include <stddef.h>

static const char *const names[X86_NR_EXCEPTIONS] = {
	[X86_VEC_DE] = "#DE divide error",
	[X86_VEC_DB] = "#DB debug",
	[X86_VEC_NMI] = "NMI",
	[X86_VEC_BP] = "#BP breakpoint",
	[X86_VEC_OF] = "#OF overflow",
	[X86_VEC_BR] = "#BR bound range",
	[X86_VEC_UD] = "#UD invalid opcode",
	[X86_VEC_NM] = "#NM device not available",
	[X86_VEC_DF] = "#DF double fault",
	[9] = "coprocessor segment overrun",
	[X86_VEC_TS] = "#TS invalid TSS",
	[X86_VEC_NP] = "#NP segment not present",
	[X86_VEC_SS] = "#SS stack fault",
	[X86_VEC_GP] = "#GP general protection",
	[X86_VEC_PF] = "#PF page fault",
	[X86_VEC_MF] = "#MF x87 error",
	[X86_VEC_AC] = "#AC alignment check",
	[X86_VEC_MC] = "#MC machine check",
	[X86_VEC_XM] = "#XM SIMD exception",
	[X86_VEC_VE] = "#VE virtualization exception",
	[X86_VEC_CP] = "#CP control protection",
	[X86_VEC_HV] = "#HV hypervisor injection",
	[X86_VEC_VC] = "#VC VMM communication",
	[X86_VEC_SX] = "#SX security exception",
};

/* The mnemonics alone, for reasons that name a fault in a word. */
static const char mnemonics[X86_NR_EXCEPTIONS][4] = {
	[X86_VEC_DE] = "#DE", [X86_VEC_DB] = "#DB", [X86_VEC_BP] = "#BP", [X86_VEC_OF] = "#OF",
	[X86_VEC_BR] = "#BR", [X86_VEC_UD] = "#UD", [X86_VEC_NM] = "#NM", [X86_VEC_DF] = "#DF",
	[X86_VEC_TS] = "#TS", [X86_VEC_NP] = "#NP", [X86_VEC_SS] = "#SS", [X86_VEC_GP] = "#GP",
	[X86_VEC_PF] = "#PF", [X86_VEC_MF] = "#MF", [X86_VEC_AC] = "#AC", [X86_VEC_MC] = "#MC",
	[X86_VEC_XM] = "#XM", [X86_VEC_VE] = "#VE", [X86_VEC_CP] = "#CP", [X86_VEC_HV] = "#HV",
	[X86_VEC_VC] = "#VC", [X86_VEC_SX] = "#SX",
};

const char *x86_vector_name(unsigned vector)
{
	if (vector < X86_NR_EXCEPTIONS && names[vector])
		return names[vector];
	return vector < X86_NR_EXCEPTIONS ? "reserved exception" : "interrupt";
}

const char *x86_vector_mnemonic(unsigned vector, const char *other)
{
	return vector < X86_NR_EXCEPTIONS && mnemonics[vector][0] ? mnemonics[vector] : other;
}
