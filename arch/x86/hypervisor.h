/* Which hypervisor runs us, by the signatures of its CPUID leaves. The
 * signature words are asm-safe: boot/entry.S asks before long mode. */
#ifndef ARCH_X86_HYPERVISOR_H
#define ARCH_X86_HYPERVISOR_H

/* A hypervisor's leaves come in blocks of 0x100 from CPUID.40000000H:
 * EAX the block's highest leaf, EBX:ECX:EDX a 12-byte signature (Linux
 * Documentation/virt/kvm/x86/cpuid.rst). A hypervisor that presents
 * another one's interface first puts its own in the next block: KVM with
 * Hyper-V enlightenments at 0x40000100 (QEMU target/i386/kvm/kvm.c), Xen
 * with Viridian likewise, and QEMU's TCG with emu/qemu's hv-sig. */
#define HV_LEAF_FIRST 0x40000000
#define HV_LEAF_NEXT 0x40000100

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

enum hv_kind { HV_TCG, HV_KVM };

/* Whether CPUID.01H:ECX[31] says a hypervisor runs us and one of the
 * first two leaf blocks carries kind's signature. */
bool hypervisor_is(enum hv_kind kind);
#endif

#endif
