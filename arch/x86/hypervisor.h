/* Which hypervisor runs us, by the signatures of its CPUID leaves. The
 * signature words are asm-safe: boot/entry.S asks before long mode. */
#ifndef ARCH_X86_HYPERVISOR_H
#define ARCH_X86_HYPERVISOR_H

/* A hypervisor's leaves come in blocks of 0x100 from CPUID.40000000H
 * (CPUID_HV_LEAF_FIRST, arch/x86/cpuid.h). A hypervisor that presents
 * another one's interface first puts its own in the next block: KVM with
 * Hyper-V enlightenments at 0x40000100 (QEMU target/i386/kvm/kvm.c), Xen
 * with Viridian likewise, and QEMU's TCG with emu/qemu's hv-sig. */

/* The signatures as CPUID returns them (little-endian words): QEMU's TCG
 * "TCGTCGTCGTCG" (QEMU target/i386/cpu.c, cpu_x86_cpuid) and KVM's
 * "KVMKVMKVM\0\0\0" (Linux Documentation/virt/kvm/x86/cpuid.rst). */
#define HV_SIG_TCG_EBX 0x54474354 /* "TCGT" */
#define HV_SIG_TCG_ECX 0x43544743 /* "CGTC" */
#define HV_SIG_TCG_EDX 0x47435447 /* "GTCG" */
#define HV_SIG_KVM_EBX 0x4b4d564b /* "KVMK" */
#define HV_SIG_KVM_ECX 0x564b4d56 /* "VMKV" */
#define HV_SIG_KVM_EDX 0x0000004d /* "M\0\0\0" */

#ifndef __ASSEMBLY__
#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/cpuid.h"

/* The hypervisors pmutest tells apart. */
enum hv {
	HV_NONE,   /* CPUID.01H:ECX[31] clear: no hypervisor that says so */
	HV_HIDDEN, /* the bit set, but no signature (e.g. QEMU's kvm=off) */
	HV_OTHER,  /* a signature pmutest does not know */
	HV_KVM,    /* "KVMKVMKVM\0\0\0" */
	HV_XEN,    /* "XenVMMXenVMM" */
	HV_VMWARE, /* "VMwareVMware" */
	HV_HYPERV, /* "Microsoft Hv" */
	HV_TCG,    /* "TCGTCGTCGTCG": QEMU's TCG, an emulator */
	HV_NR
};

/* Which one, and where its signature was read. */
struct hv_id {
	enum hv hv;
	uint32_t leaf;      /* the leaf the signature came from; 0 when none */
	char signature[13]; /* as read, NUL-terminated; "" when none */
};

/* The one identification (arch/x86/hv_identify.c, pure, so the host
 * tests link it): given CPUID.01H:ECX[31] and a CPUID function, the best
 * signature of any leaf block in the range Linux scans (Linux
 * arch/x86/include/asm/processor.h hypervisor_cpuid_base). Xen with
 * Viridian and QEMU/KVM with Hyper-V enlightenments answer as Hyper-V
 * at 0x40000000 and as themselves at 0x40000100, so Hyper-V is taken
 * only when no other signature is found. */
typedef void (*hv_cpuid_fn)(uint32_t leaf, uint32_t subleaf, struct cpuid_regs *r);
void hv_identify(bool hypervisor_bit, hv_cpuid_fn cpuid_fn, struct hv_id *id);
/* The hypervisor whose signature leaf's block carries (HV_OTHER for an
 * unknown one), the signature copied to sig. */
enum hv hv_at(hv_cpuid_fn cpuid_fn, uint32_t leaf, char sig[13]);
/* "KVM", "bare metal", ...; NULL out of range. */
const char *hv_name(enum hv hv);

/* Whether CPUID.01H:ECX[31] says a hypervisor runs us and one of the
 * first two leaf blocks carries hv's signature (the kernel's CPUID). */
bool hypervisor_is(enum hv hv);
#endif

#endif
