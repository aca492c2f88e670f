/* Exception names, for register dumps and for the reasons that name a
 * faulting register access. */
#include "arch/x86/vectors.h"

#include <stddef.h>

struct vector_name {
	const char *mnemonic, *name;
};

static const struct vector_name exceptions[X86_NR_EXCEPTIONS] = {
	[X86_VEC_DE] = { "#DE", "#DE divide error" },
	[X86_VEC_DB] = { "#DB", "#DB debug" },
	[X86_VEC_NMI] = { NULL, "NMI" },
	[X86_VEC_BP] = { "#BP", "#BP breakpoint" },
	[X86_VEC_OF] = { "#OF", "#OF overflow" },
	[X86_VEC_BR] = { "#BR", "#BR bound range" },
	[X86_VEC_UD] = { "#UD", "#UD invalid opcode" },
	[X86_VEC_NM] = { "#NM", "#NM device not available" },
	[X86_VEC_DF] = { "#DF", "#DF double fault" },
	[9] = { NULL, "coprocessor segment overrun" },
	[X86_VEC_TS] = { "#TS", "#TS invalid TSS" },
	[X86_VEC_NP] = { "#NP", "#NP segment not present" },
	[X86_VEC_SS] = { "#SS", "#SS stack fault" },
	[X86_VEC_GP] = { "#GP", "#GP general protection" },
	[X86_VEC_PF] = { "#PF", "#PF page fault" },
	[X86_VEC_MF] = { "#MF", "#MF x87 error" },
	[X86_VEC_AC] = { "#AC", "#AC alignment check" },
	[X86_VEC_MC] = { "#MC", "#MC machine check" },
	[X86_VEC_XM] = { "#XM", "#XM SIMD exception" },
	[X86_VEC_VE] = { "#VE", "#VE virtualization exception" },
	[X86_VEC_CP] = { "#CP", "#CP control protection" },
	[X86_VEC_HV] = { "#HV", "#HV hypervisor injection" },
	[X86_VEC_VC] = { "#VC", "#VC VMM communication" },
	[X86_VEC_SX] = { "#SX", "#SX security exception" },
};

const char *x86_vector_name(unsigned vector)
{
	if (vector < X86_NR_EXCEPTIONS && exceptions[vector].name)
		return exceptions[vector].name;
	return vector < X86_NR_EXCEPTIONS ? "reserved exception" : "interrupt";
}

const char *x86_vector_mnemonic(unsigned vector, const char *other)
{
	if (vector < X86_NR_EXCEPTIONS && exceptions[vector].mnemonic)
		return exceptions[vector].mnemonic;
	return other;
}
