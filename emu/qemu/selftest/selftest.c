/*
 * A check of the emulated PMU's counting conventions (emu/qemu/README.md,
 * "Counting conventions") and a measure of what counting costs, as a
 * tiny 32-bit multiboot kernel: each window is WRMSR (enable), a body,
 * MOV, MOV, WRMSR (disable), so instructions = body + 3 by the
 * conventions; the expected body counts below are the conventions
 * written as numbers.  A trip to ring 3 checks where a privilege change
 * is counted and that reference cycles follow the privilege level, and
 * the GP reference clock is compared with FIXED_CTR2 through CPUID.15H.
 * A word on the command line instead runs one case of a departure from
 * silicon the emulator had (one_case), on the machine make emu-selftest
 * gives it.
 * Prints "ok"/"not ok" lines on COM1 and exits through isa-debug-exit
 * (0x10 all passed, 0x11 otherwise).
 *
 * Copyright (c) 2025 The pmutest authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <stdbool.h>
#include <stdint.h>

#define COM1 0x3f8
#define DEBUG_EXIT 0xf4
#define MSR_PERFEVTSEL0 0x186
#define MSR_PMC0 0xc1
#define MSR_FIXED_CTR0 0x309
#define MSR_FIXED_CTR_CTRL 0x38d
#define MSR_GLOBAL_CTRL 0x38f
#define SEL_USR_EN ((1u << 16) | (1u << 22))
#define SEL_OS_USR_EN ((1u << 16) | (1u << 17) | (1u << 22))

/* --- Multiboot (version 1) header, entry, stack --- */

__attribute__((section(".multiboot"), used, aligned(4)))
static const uint32_t multiboot_header[3] = {
    0x1badb002, 0, (uint32_t)-(0x1badb002 + 0),
};

uint8_t stack[16384] __attribute__((aligned(16)));
void main32(uint32_t magic, uint32_t mbi);
__asm__(".globl _start\n_start:\n\t"
        "mov $stack + 16384, %esp\n\t"
        "push %ebx\n\tpush %eax\n\t"
        "call main32\n"
        "1: hlt\n\tjmp 1b\n");

/* --- Port I/O, serial output --- */

static void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static uint8_t inb(uint16_t port)
{
    uint8_t v;

    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static void outl(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static uint32_t inl(uint16_t port)
{
    uint32_t v;

    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static void put_char(char c)
{
    while (!(inb(COM1 + 5) & 0x20)) {
        __asm__ volatile("pause");
    }
    outb(COM1, (uint8_t)c);
}

static void puts(const char *s)
{
    while (*s) {
        put_char(*s++);
    }
}

/* 32 bits: a 32-bit kernel without libgcc has no 64-bit division. */
static void putu(uint32_t v)
{
    char buf[12], *p = buf + sizeof(buf) - 1;

    *p = 0;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    puts(p);
}

/* --- CPU helpers --- */

static void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c,
                  uint32_t *d)
{
    __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
                     : "a"(leaf), "c"(0));
}

static void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v),
                     "d"((uint32_t)(v >> 32)) : "memory");
}

static uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;

    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return (uint64_t)hi << 32 | lo;
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

/* --- Exceptions: #DE and #UD skip the 2-byte instruction, #BP returns --- */

struct idt_entry {
    uint16_t off_lo, sel;
    uint8_t zero, type;
    uint16_t off_hi;
} __attribute__((packed));

static struct idt_entry idt[0x81];
void skip2_handler(void);
void return_handler(void);
void back_from_ring3(void);     /* INT 80H: see to_ring3() */
/* Two instructions and one: the handlers' cost in each window. */
__asm__(".globl skip2_handler\nskip2_handler:\n\t"
        "addl $2, (%esp)\n\t"
        "iret\n"
        ".globl return_handler\nreturn_handler:\n\t"
        "iret\n");

static void set_gate(unsigned vec, void (*fn)(void))
{
    uint16_t cs;

    __asm__ volatile("mov %%cs, %0" : "=r"(cs));
    idt[vec].off_lo = (uint16_t)(uintptr_t)fn;
    idt[vec].off_hi = (uint16_t)((uintptr_t)fn >> 16);
    idt[vec].sel = cs;
    idt[vec].zero = 0;
    idt[vec].type = 0x8e;  /* present, DPL 0, 32-bit interrupt gate */
}

static void load_idt(void)
{
    struct {
        uint16_t limit;
        uint32_t base;
    } __attribute__((packed)) d = { sizeof(idt) - 1, (uint32_t)(uintptr_t)idt };

    set_gate(0, skip2_handler);     /* #DE */
    set_gate(3, return_handler);    /* #BP */
    set_gate(6, skip2_handler);     /* #UD */
    set_gate(0x80, back_from_ring3);
    idt[0x80].type = 0xee;  /* DPL 3: INT 80H works from ring 3 */
    __asm__ volatile("lidt %0" : : "m"(d));
}

/*
 * --- Ring 3: a GDT with user segments, a TSS for the way back, and
 * INT 80H (a DPL-3 gate) that returns to the caller of to_ring3() ---
 */

static uint64_t gdt[6] = {
    0,
    0x00cf9a000000ffffull,     /* 0x08: code, DPL 0 */
    0x00cf92000000ffffull,     /* 0x10: data, DPL 0 */
    0x00cffa000000ffffull,     /* 0x18: code, DPL 3 */
    0x00cff2000000ffffull,     /* 0x20: data, DPL 3 */
    0,                         /* 0x28: the TSS */
};
static uint32_t tss[26];       /* ESP0 at 4, SS0 at 8 (bytes) */
static uint8_t ring0_stack[4096] __attribute__((aligned(16)));
static uint8_t ring3_stack[4096] __attribute__((aligned(16)));
uint32_t ring0_esp;            /* to_ring3()'s stack, for the way back */
void to_ring3(void (*fn)(void), uint32_t esp);
/*
 * to_ring3: save the callee-saved registers and ESP, IRET to fn at CPL 3
 * on `esp`.  fn ends with INT 80H; its handler takes the saved ESP back
 * and returns from to_ring3.
 */
__asm__(".globl to_ring3\nto_ring3:\n\t"
        "push %ebp\n\tpush %ebx\n\tpush %esi\n\tpush %edi\n\t"
        "mov 20(%esp), %eax\n\t"
        "mov 24(%esp), %ecx\n\t"
        "mov %esp, ring0_esp\n\t"
        "mov $0x23, %edx\n\tmov %dx, %ds\n\tmov %dx, %es\n\t"
        "push $0x23\n\tpush %ecx\n\tpushf\n\tpush $0x1b\n\tpush %eax\n\t"
        "iret\n"
        ".globl back_from_ring3\nback_from_ring3:\n\t"
        "mov $0x10, %edx\n\tmov %dx, %ds\n\tmov %dx, %es\n\t"
        "mov ring0_esp, %esp\n\t"
        "pop %edi\n\tpop %esi\n\tpop %ebx\n\tpop %ebp\n\t"
        "ret\n");

static void load_gdt(void)
{
    uint32_t base = (uint32_t)(uintptr_t)tss, limit = sizeof(tss) - 1;
    struct {
        uint16_t limit;
        uint32_t base;
    } __attribute__((packed)) d = { sizeof(gdt) - 1, (uint32_t)(uintptr_t)gdt };

    /* A 32-bit available TSS, DPL 0. */
    gdt[5] = (uint64_t)(limit & 0xffff) | (uint64_t)(base & 0xffffff) << 16 |
             0x89ull << 40 | (uint64_t)(base >> 24) << 56;
    tss[1] = (uint32_t)(uintptr_t)(ring0_stack + sizeof(ring0_stack));
    tss[2] = 0x10;
    __asm__ volatile("lgdt %0\n\t"
                     "ljmp $0x08, $1f\n"
                     "1:\n\t"
                     "mov $0x10, %%eax\n\tmov %%ax, %%ds\n\tmov %%ax, %%es\n\t"
                     "mov %%ax, %%ss\n\tmov %%ax, %%fs\n\tmov %%ax, %%gs\n\t"
                     "mov $0x28, %%eax\n\tltr %%ax"
                     : : "m"(d) : "eax", "memory");
}

/* --- Windows --- */

/*
 * WRMSR GLOBAL_CTRL <- EAX (EDX:EAX = 3: PMC0 and PMC1), the body, MOV,
 * MOV, WRMSR GLOBAL_CTRL <- 0.  ECX holds the MSR number: a body that
 * changes it puts 0x38F back.
 */
#define WINDOW(body) \
    "wrmsr\n\t" body "\n\tmov $0, %%eax\n\tmov $0, %%edx\n\twrmsr\n\t"
#define REGS "+a"(lo), "+d"(hi), "+c"(ecx)
#define START() (lo = 3, hi = 0, ecx = MSR_GLOBAL_CTRL)

static unsigned failures, passes;
/*
 * 1 when QEMU runs with pmu-delivery-retires=on and says so on the
 * command line: an exception's delivery adds an instruction and a branch.
 */
static uint32_t delivery;

static void check(const char *what, uint32_t seen, uint32_t want)
{
    puts(seen == want ? "ok " : "not ok ");
    puts(what);
    puts(": ");
    putu(seen);
    puts(", expected ");
    putu(want);
    puts("\n");
    failures += seen != want;
    passes += seen == want;
}

static uint8_t src[256], dst[256];

/* The counters: PMC0 instructions, PMC1 branches, cleared. */
static void arm(uint64_t sel0)
{
    /* GLOBAL_CTRL's RESET value enables the GP counters: stop them first. */
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, sel0);
    wrmsr(MSR_PERFEVTSEL0 + 1, 0xc4 | SEL_OS_USR_EN);
    wrmsr(MSR_PMC0, 0);
    wrmsr(MSR_PMC0 + 1, 0);
}

static void conventions(void)
{
    uint32_t lo, hi, ecx;
    const void *sp;
    void *dp;

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("") : REGS : : "memory", "cc");
    check("empty window: the enabling WRMSR and the MOVs",
          (uint32_t)rdmsr(MSR_PMC0), 3);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("mov $1000, %%ebx\n1: dec %%ebx\n\tjnz 1b")
                     : REGS : : "memory", "cc", "ebx");
    check("loop of 1000: 1 + 2000 instructions", (uint32_t)rdmsr(MSR_PMC0), 2001 + 3);
    check("loop of 1000: 1000 branches", (uint32_t)rdmsr(MSR_PMC0 + 1), 1000);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    sp = src, dp = dst;
    __asm__ volatile(WINDOW("mov $100, %%ecx\n\trep movsb\n\t"
                            "mov $0x38f, %%ecx")
                     : REGS, "+S"(sp), "+D"(dp) : : "memory", "cc");
    check("REP MOVSB of 100 bytes counts once", (uint32_t)rdmsr(MSR_PMC0), 3 + 3);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    sp = src, dp = dst;
    __asm__ volatile(WINDOW("xor %%ecx, %%ecx\n\trep movsb\n\t"
                            "mov $0x38f, %%ecx")
                     : REGS, "+S"(sp), "+D"(dp) : : "memory", "cc");
    check("REP MOVSB of 0 bytes counts once", (uint32_t)rdmsr(MSR_PMC0), 3 + 3);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("ud2") : REGS : : "memory", "cc");
    check("UD2 faults: not counted; its handler's 2 are (and #UD's delivery)",
          (uint32_t)rdmsr(MSR_PMC0), 2 + 3 + delivery);
    check("UD2: the handler's IRET is the one branch (and #UD's delivery)",
          (uint32_t)rdmsr(MSR_PMC0 + 1), 1 + delivery);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("xor %%ebx, %%ebx\n\tdiv %%ebx")
                     : REGS : : "memory", "cc", "ebx");
    check("DIV by 0 faults: XOR and the handler's 2 (and #DE's delivery)",
          (uint32_t)rdmsr(MSR_PMC0), 1 + 2 + 3 + delivery);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("int3") : REGS : : "memory", "cc");
    check("INT3 is a trap: counted, with the handler's IRET",
          (uint32_t)rdmsr(MSR_PMC0), 1 + 1 + 3);
    check("INT3 and IRET are branches", (uint32_t)rdmsr(MSR_PMC0 + 1), 2);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("cpuid\n\tmov $0x38f, %%ecx")
                     : REGS : : "memory", "cc", "ebx");
    check("CPUID counts once", (uint32_t)rdmsr(MSR_PMC0), 2 + 3);

    /* CMASK=1 counts cycles retiring >= 1: one per instruction. */
    arm(0xc0 | SEL_OS_USR_EN | (1u << 24));
    START();
    __asm__ volatile(WINDOW("mov $1000, %%ebx\n1: dec %%ebx\n\tjnz 1b")
                     : REGS : : "memory", "cc", "ebx");
    check("CMASK=1: one retiring cycle per instruction", (uint32_t)rdmsr(MSR_PMC0),
          2001 + 3);
}

/*
 * Skylake's model-specific events the emulator counts (its README, "What
 * is emulated"): INST_RETIRED.PREC_DIST (C0H/01H) and UOPS_RETIRED.ALL
 * (C2H/01H) as instructions, BR_INST_RETIRED.NEAR_CALL (C4H/02H),
 * NEAR_RETURN (08H) and NEAR_TAKEN (20H) as the taken branches retire.
 * The window: a MOV, 10 x (CALL, RET, DEC, JNZ) of which 9 JNZ taken,
 * a JMP; with the window's own 3.
 */
#define CALLS_WINDOW WINDOW("mov $10, %%ebx\n1: call 2f\n\tdec %%ebx\n\t" \
                            "jnz 1b\n\tjmp 3f\n2: ret\n3:")

static uint32_t calls_window(uint32_t sel)
{
    uint32_t lo, hi, ecx;

    arm(sel | SEL_OS_USR_EN);
    START();
    __asm__ volatile(CALLS_WINDOW : REGS : : "memory", "cc", "ebx");
    return (uint32_t)rdmsr(MSR_PMC0);
}

static void model_specific_events(void)
{
    check("INST_RETIRED.PREC_DIST counts the instructions",
          calls_window(0x1c0), 42 + 3);
    check("UOPS_RETIRED.ALL: one uop per instruction", calls_window(0x1c2),
          42 + 3);
    check("all branches: 10 CALLs, 10 RETs, 10 JNZs, the JMP",
          (uint32_t)rdmsr(MSR_PMC0 + 1), 31);
    check("BR_INST_RETIRED.NEAR_CALL", calls_window(0x2c4), 10);
    check("BR_INST_RETIRED.NEAR_RETURN", calls_window(0x8c4), 10);
    check("BR_INST_RETIRED.NEAR_TAKEN: all but the last JNZ",
          calls_window(0x20c4), 30);
}

/*
 * A PMI and a maskable interrupt at one instruction boundary: the NMI is
 * taken first (SDM vol. 3A, 6.9, "Priority Among Concurrent Events"), so
 * its saved EIP is the boundary's, not the interrupt handler's first
 * instruction.  IF is clear while a self-IPI is made pending; the counter
 * overflows on the NOP after STI, the boundary where the STI shadow ends
 * and the interrupt becomes deliverable.
 */
extern volatile uint32_t nmi_eip, nmis_seen, intrs_seen;
volatile uint32_t nmi_eip, nmis_seen, intrs_seen;
void nmi_handler(void);
void intr_handler(void);
extern const char pmi_boundary[];
__asm__(".globl nmi_handler\nnmi_handler:\n\t"
        "push %eax\n\tmov 4(%esp), %eax\n\tmov %eax, nmi_eip\n\t"
        "incl nmis_seen\n\tpop %eax\n\tiret\n"
        ".globl intr_handler\nintr_handler:\n\t"
        "incl intrs_seen\n\tmovl $0, 0xfee000b0\n\tiret\n");

static void pmi_before_interrupt(void)
{
    volatile uint32_t *apic = (volatile uint32_t *)0xfee00000;
    uint32_t lo = 1, hi = 0, ecx = MSR_GLOBAL_CTRL;

    set_gate(2, nmi_handler);
    set_gate(0x40, intr_handler);
    apic[0xf0 / 4] = 0x1ff;             /* SVR: APIC software-enabled */
    apic[0x340 / 4] = 0x400;            /* LVTPC: NMI */
    wrmsr(MSR_GLOBAL_CTRL, 0);
    /* Instructions, PMI on overflow; -3: the enabling WRMSR, STI, NOP. */
    wrmsr(MSR_PERFEVTSEL0, 0xc0 | SEL_OS_USR_EN | (1u << 20));
    wrmsr(MSR_PMC0, 0xfffffffd);
    apic[0x300 / 4] = 0x40 | (1u << 14) | (1u << 18);  /* self-IPI */
    __asm__ volatile("wrmsr\n\tsti\n\tnop\n"
                     ".globl pmi_boundary\npmi_boundary:\n\t"
                     "nop\n\tnop\n\tcli"
                     : "+a"(lo), "+d"(hi), "+c"(ecx) : : "memory");
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, 0);
    apic[0x340 / 4] = 0x10000;          /* LVTPC masked */
    check("PMI and interrupt at one boundary: one NMI, one interrupt",
          nmis_seen * 10 + intrs_seen, 11);
    check("... the NMI taken first, at the boundary (saved EIP - boundary)",
          nmi_eip - (uint32_t)(uintptr_t)pmi_boundary, 0);
}

/*
 * A PMI comes at its overflow whatever else the PMU does between
 * instructions (SDM vol. 3B, 21.6.3.5.8 "Generating an Interrupt on
 * Overflow": the interrupt is generated when the counter overflows).
 * The emulator folds what translated code accounted whenever it re-decides
 * how far the guest may run: its reference-cycles timer, which catches a
 * FIXED_CTR2 overflow between instructions, must not let an instruction
 * counter's PMI come late.  ESI counts a DEC/JNZ loop down; the NMI
 * handler keeps it, the iteration the PMI interrupted.  It must be the
 * same with FIXED_CTR2 some ticks from its overflow (its timer fires
 * within the window, its PMI off) as without it.
 */
#define PMI_ITERS 10000000u
#define PMI_PERIOD 16000000u
extern volatile uint32_t nmi_esi;
volatile uint32_t nmi_esi;
void nmi_esi_handler(void);
__asm__(".globl nmi_esi_handler\nnmi_esi_handler:\n\t"
        "mov %esi, nmi_esi\n\tincl nmis_seen\n\tiret\n");

static uint32_t pmi_iteration(bool ref_clock, uint32_t ref_ticks)
{
    volatile uint32_t *apic = (volatile uint32_t *)0xfee00000;
    uint32_t lo = 1, hi = ref_clock ? 1u << (34 - 32) : 0;
    uint32_t ecx = MSR_GLOBAL_CTRL, n = PMI_ITERS;

    nmis_seen = 0;
    nmi_esi = 0;
    apic[0x340 / 4] = 0x400;            /* LVTPC: NMI, unmasked */
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, 0xc0 | SEL_OS_USR_EN | (1u << 20));
    wrmsr(MSR_PMC0, (uint32_t)-PMI_PERIOD);   /* sign-extended */
    /* FIXED_CTR2: reference cycles, OS and USR, no PMI. */
    wrmsr(MSR_FIXED_CTR_CTRL, 0x3 << 8);
    wrmsr(MSR_FIXED_CTR0 + 2, ref_clock ? (1ull << 48) - ref_ticks : 0);
    __asm__ volatile("wrmsr\n\t"
                     "1: dec %%esi\n\tjnz 1b\n\t"
                     "mov $0, %%eax\n\tmov $0, %%edx\n\twrmsr"
                     : "+a"(lo), "+d"(hi), "+c"(ecx), "+S"(n) : : "memory", "cc");
    wrmsr(MSR_FIXED_CTR_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, 0);
    apic[0x340 / 4] = 0x10000;          /* LVTPC masked */
    return nmis_seen == 1 ? nmi_esi : 0;
}

static void pmi_on_time(void)
{
    /* TSC ticks to FIXED_CTR2's overflow: its timer fires early, midway or late in the window. */
    static const uint32_t ref_ticks[3] = { 3000000, 10000000, 30000000 };
    uint32_t alone, beside_ref;
    unsigned i;

    set_gate(2, nmi_esi_handler);
    alone = pmi_iteration(false, 0);
    beside_ref = alone;
    for (i = 0; i < 3 && beside_ref == alone; i++) {
        beside_ref = pmi_iteration(true, ref_ticks[i]);
    }
    set_gate(2, nmi_handler);
    /*
     * The enabling WRMSR retires counted, then each iteration's DEC and
     * JNZ: the DEC of iteration PERIOD / 2 overflows, the PMI follows it.
     */
    check("instruction PMI alone: one NMI, after its overflowing DEC",
          alone, PMI_ITERS - PMI_PERIOD / 2);
    check("... the same iteration in 3 windows while FIXED_CTR2's timer runs",
          beside_ref, alone);
}

/*
 * Reference cycles count while the core is not halted (SDM vol. 3B,
 * "Pre-defined Architectural Performance Events", UnHalted Reference
 * Cycles), and FIXED_CTR2 (CPU_CLK_UNHALTED.REF_TSC, "Fixed-function
 * Performance Counters") ticks with the TSC: over a loop of PAUSE it counts
 * the TSC's ticks.  TCG leaves its execution loop at every PAUSE; the
 * reference clock must run on through those exits, which are not halts.
 * The window is bounded by RDTSC, so the count is at most its ticks, and
 * at least all but the few instructions between each RDTSC and its WRMSR:
 * 1/64 of the window (over 2^27 ticks) leaves room for the host to
 * preempt the vCPU there, and the best of 3 windows for it to do so more
 * than once.  The TSC is the host's: a busy host only lengthens the window.
 */
#define PAUSE_WINDOW (1u << 27)

static void pause_ref_cycles(void)
{
    uint64_t t0, t1, fixed, window, best_fixed = 0, best_window = 0;
    unsigned i;

    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, 0);
    wrmsr(MSR_FIXED_CTR_CTRL, 0x3 << 8);   /* FIXED_CTR2, OS and USR */
    for (i = 0; i < 3; i++) {
        wrmsr(MSR_FIXED_CTR0 + 2, 0);
        t0 = rdtsc();
        wrmsr(MSR_GLOBAL_CTRL, 1ull << 34);
        do {
            __asm__ volatile("mov $100, %%ecx\n1: pause\n\tdec %%ecx\n\tjnz 1b"
                             : : : "ecx", "cc");
        } while (rdtsc() - t0 < PAUSE_WINDOW);
        wrmsr(MSR_GLOBAL_CTRL, 0);
        t1 = rdtsc();
        fixed = rdmsr(MSR_FIXED_CTR0 + 2);
        window = t1 - t0;
        /* The best: the largest share of its window (a / b > c / d). */
        if (!i || fixed * best_window > best_fixed * window) {
            best_fixed = fixed;
            best_window = window;
        }
    }
    wrmsr(MSR_FIXED_CTR_CTRL, 0);
    puts("# PAUSE loop (best of 3): ");
    putu(best_window > ~0u ? ~0u : (uint32_t)best_window);
    puts(" TSC ticks, FIXED_CTR2 ");
    putu(best_fixed > ~0u ? ~0u : (uint32_t)best_fixed);
    puts("\n");
    check("PAUSE loop: FIXED_CTR2 counts the TSC's ticks, within 1/64 of them",
          best_fixed <= best_window && best_fixed * 64 >= best_window * 63, 1);
}

/*
 * ... and they stop while it is halted: HLT, woken by the local APIC's
 * one-shot timer (vector 40H, intr_handler) some 2^24 of its ticks later.
 * What counts is the few instructions before the HLT and after the wake;
 * the check allows a quarter of the window, the best of 3 again.
 */
static void hlt_ref_cycles(void)
{
    volatile uint32_t *apic = (volatile uint32_t *)0xfee00000;
    uint64_t t0, t1, fixed, window, best_fixed = 0, best_window = 0;
    unsigned i;

    set_gate(0x40, intr_handler);
    apic[0xf0 / 4] = 0x1ff;             /* SVR: APIC software-enabled */
    apic[0x3e0 / 4] = 0xb;              /* timer divide by 1 */
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_FIXED_CTR_CTRL, 0x3 << 8);   /* FIXED_CTR2, OS and USR */
    intrs_seen = 0;
    for (i = 0; i < 3; i++) {
        wrmsr(MSR_FIXED_CTR0 + 2, 0);
        apic[0x320 / 4] = 0x40;         /* LVT timer: one-shot, 40H */
        t0 = rdtsc();
        wrmsr(MSR_GLOBAL_CTRL, 1ull << 34);
        apic[0x380 / 4] = 1u << 24;     /* initial count: start */
        __asm__ volatile("sti\n\thlt\n\tcli" : : : "memory");
        wrmsr(MSR_GLOBAL_CTRL, 0);
        t1 = rdtsc();
        fixed = rdmsr(MSR_FIXED_CTR0 + 2);
        window = t1 - t0;
        /* The best: the smallest share of its window. */
        if (!i || fixed * best_window < best_fixed * window) {
            best_fixed = fixed;
            best_window = window;
        }
    }
    apic[0x320 / 4] = 0x10000;          /* LVT timer masked */
    wrmsr(MSR_FIXED_CTR_CTRL, 0);
    puts("# HLT until the APIC timer (best of 3): ");
    putu(best_window > ~0u ? ~0u : (uint32_t)best_window);
    puts(" TSC ticks, FIXED_CTR2 ");
    putu(best_fixed > ~0u ? ~0u : (uint32_t)best_fixed);
    puts("\n");
    check("HLT: 3 timer interrupts woke it", intrs_seen, 3);
    check("HLT: FIXED_CTR2 stops while halted, under 1/4 of the window",
          best_fixed * 4 < best_window, 1);
}

static uint32_t timed_loop_body(uint32_t n)
{
    __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
    return n;
}

/*
 * Ring 3, by IRET; back by INT 80H.  N iterations of DEC/JNZ between two
 * RDTSCs (their values kept in user_t0/user_t1).
 */
#define RING3_ITERS 1000000
uint32_t user_t0, user_t1;
void user_loop(void);
__asm__(".globl user_loop\nuser_loop:\n\t"
        "rdtsc\n\tmov %eax, user_t0\n\t"
        "mov $1000000, %ecx\n"
        "1:\tdec %ecx\n\tjnz 1b\n\t"
        "rdtsc\n\tmov %eax, user_t1\n\t"
        "int $0x80\n");

static void ring3_run(void)
{
    uint8_t *top = ring3_stack + sizeof(ring3_stack);

    to_ring3(user_loop, (uint32_t)(uintptr_t)top);
}

static void gp_ref_clock(void);

static void privilege(void)
{
    uint32_t usr;

    /*
     * USR-only core cycles around a trip to ring 3: the loop (2 per
     * iteration), 3 MOVs, 2 RDTSCs (20 each), and of the IRET in (40) and
     * the INT 80H out (60) the one counted at CPL 3: in the target mode
     * the IRET (pmu-target-mode, the default), else the INT.
     */
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, 0x3c | SEL_USR_EN);
    wrmsr(MSR_PERFEVTSEL0 + 1, 0xc0 | SEL_USR_EN);
    wrmsr(MSR_PMC0, 0);
    wrmsr(MSR_PMC0 + 1, 0);
    wrmsr(MSR_GLOBAL_CTRL, 3);
    ring3_run();
    wrmsr(MSR_GLOBAL_CTRL, 0);
    check("ring 3: USR cycles hold the IRET in, not the INT 80H out",
          (uint32_t)rdmsr(MSR_PMC0), 2 * RING3_ITERS + 3 + 2 * 20 + 40);
    check("ring 3: USR instructions: the IRET, the loop, 3 MOVs, 2 RDTSCs",
          (uint32_t)rdmsr(MSR_PMC0 + 1), 1 + 2 * RING3_ITERS + 3 + 2);

    /*
     * Reference cycles counting only at CPL 3, nothing else counting:
     * the ticks of the ring-3 loop are theirs (folded at each privilege
     * change), at least half of the TSC ticks the loop saw.
     */
    wrmsr(MSR_PERFEVTSEL0, 0);
    wrmsr(MSR_PERFEVTSEL0 + 1, 0);
    wrmsr(MSR_FIXED_CTR0 + 2, 0);
    wrmsr(MSR_FIXED_CTR_CTRL, 0x2 << 8);   /* FIXED_CTR2, USR */
    wrmsr(MSR_GLOBAL_CTRL, 1ull << 34);
    ring3_run();
    wrmsr(MSR_GLOBAL_CTRL, 0);
    usr = (uint32_t)rdmsr(MSR_FIXED_CTR0 + 2);
    check("ring 3: USR-only reference cycles cover the ring-3 loop",
          usr >= (user_t1 - user_t0) / 2, 1);

    gp_ref_clock();
}

/*
 * From Golden Cove and Gracemont on, 3CH/01H is CPU_CLK_UNHALTED.REF_TSC_P,
 * "the same incrementing frequency as the time stamp counter"; before them
 * (Skylake to Ice Lake) CPU_CLK_UNHALTED.REF_XCLK, the core crystal clock
 * that CPUID.15H relates to the TSC (Intel's event lists,
 * github.com/intel/perfmon at 6dadedf, each part's *_core.json, and
 * mapfile.csv for the family-6 model numbers: SPR 8F, EMR CF, GNR AD/AE,
 * ADL 97/9A/BE, RPL B7/BA/BF, MTL AA/AC, ARL C5/C6/B5, LNL BD, PTL CC/D5/E5,
 * SRF AF, GRR B6, CWF DD; families 18 and 19 after them).
 */
static bool ref_at_tsc(void)
{
    static const uint8_t models[] = {
        0x8f, 0xcf, 0xad, 0xae, 0x97, 0x9a, 0xbe, 0xb7, 0xba, 0xbf, 0xaa,
        0xac, 0xc5, 0xc6, 0xb5, 0xbd, 0xcc, 0xd5, 0xe5, 0xaf, 0xb6, 0xdd,
    };
    uint32_t a, b, c, d, family, model;
    unsigned i;

    cpuid(1, &a, &b, &c, &d);
    family = (a >> 8) & 0xf;
    family += family == 0xf ? (a >> 20) & 0xff : 0;
    model = ((a >> 4) & 0xf) | (family == 6 || family >= 0xf ?
                                (a >> 12) & 0xf0 : 0);
    if (family >= 0x12) {
        return true;
    }
    for (i = 0; family == 6 && i < sizeof(models); i++) {
        if (model == models[i]) {
            return true;
        }
    }
    return false;
}

/*
 * 3CH/01H on a GP counter ticks once per `ratio` TSC ticks (1, or
 * CPUID.15H EBX/EAX: ref_at_tsc); FIXED_CTR2 once per TSC tick: over the
 * same window GP * ratio is FIXED_CTR2 to within one GP tick.
 */
static void gp_ref_clock(void)
{
    uint32_t a, b, c, d, gp, fixed;
    bool tsc = ref_at_tsc();

    cpuid(0, &a, &b, &c, &d);
    if (!tsc && a < 0x15) {
        puts("# no CPUID.15H: GP reference clock ratio not checked\n");
        return;
    }
    cpuid(0x15, &a, &b, &c, &d);
    if (tsc) {
        a = b = 1;
    }
    /* GLOBAL_CTRL's RESET value enables the GP counters: stop them first. */
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_FIXED_CTR0 + 2, 0);
    wrmsr(MSR_FIXED_CTR_CTRL, 0x3 << 8);
    wrmsr(MSR_PERFEVTSEL0, 0x13c | SEL_OS_USR_EN);
    wrmsr(MSR_PMC0, 0);
    wrmsr(MSR_GLOBAL_CTRL, (1ull << 34) | 1);
    (void)timed_loop_body(RING3_ITERS);
    wrmsr(MSR_GLOBAL_CTRL, 0);
    gp = (uint32_t)rdmsr(MSR_PMC0);
    fixed = (uint32_t)rdmsr(MSR_FIXED_CTR0 + 2);
    b /= a ? a : 1;
    puts("# 3CH/01H on PMC0 ");
    putu(gp);
    puts(", FIXED_CTR2 ");
    putu(fixed);
    puts(", TSC ticks per 3CH/01H tick ");
    putu(b);
    puts("\n");
    check(tsc ? "GP reference cycles = FIXED_CTR2 (REF_TSC_P), within one tick" :
          "GP reference cycles x CPUID.15H ratio = FIXED_CTR2, within one tick",
          gp * b <= fixed + b && gp * b + b >= fixed && gp > 0, 1);
    wrmsr(MSR_FIXED_CTR_CTRL, 0);
    wrmsr(MSR_PERFEVTSEL0, 0);
}

/*
 * INIT leaves the performance-monitoring MSRs unchanged (SDM vol. 3A,
 * "Initialization", the table of processor states following power-up,
 * reset or INIT), and the uncore is the package's: starting a package's
 * first CPU with INIT-SIPI must not clear it.  make emu-selftest runs this
 * on two Skylake-SP packages of one CPU each, with socket 1's memory
 * channel 0 (x86-pmu-skx-imc) at 0:10.0: the BSP writes that channel's
 * first event select in PCI configuration space (D8H, Linux
 * uncore_snbep.c SNBEP_PCI_PMON_CTL0), INIT-SIPIs CPU 1 (APIC ID 1) into a
 * real-mode stub that sets a flag at 7800H, and reads the select back.
 */
#define SKX_IMC_SOCKET1 ((0x10u << 11) | (0u << 8))    /* 0:10.0 */
#define SKX_CHAN_SEL0 0xd8
#define AP_STUB 0x7000u         /* SIPI vector 07H */
#define AP_FLAG 0x7800u
#define AP_BUDGET (1ull << 36)  /* TSC ticks: seconds, for a busy host */

static uint32_t pci_read(uint32_t bdf, uint32_t off)
{
    outl(0xcf8, 0x80000000u | bdf | off);
    return inl(0xcfc);
}

static void pci_write(uint32_t bdf, uint32_t off, uint32_t v)
{
    outl(0xcf8, 0x80000000u | bdf | off);
    outl(0xcfc, v);
}

static void ipi(uint32_t apic_id, uint32_t icr)
{
    volatile uint32_t *apic = (volatile uint32_t *)0xfee00000;

    apic[0x310 / 4] = apic_id << 24;
    apic[0x300 / 4] = icr;
    while (apic[0x300 / 4] & (1u << 12)) {     /* delivery status */
        __asm__ volatile("pause");
    }
}

static void uncore_init(void)
{
    /* MOV BYTE [7800H], 1; CLI; HLT; JMP to the HLT. */
    static const uint8_t stub[] = {
        0xc6, 0x06, 0x00, 0x78, 0x01, 0xfa, 0xf4, 0xeb, 0xfd,
    };
    volatile uint8_t *flag = (volatile uint8_t *)AP_FLAG;
    volatile uint32_t *apic = (volatile uint32_t *)0xfee00000;
    const uint32_t sel = 0x00400304;    /* EN, umask 03H, event 04H */
    uint64_t t0;
    unsigned i;

    if ((pci_read(SKX_IMC_SOCKET1, 0) & 0xffff) != 0x8086) {
        check("uncore: socket 1's memory channel 0 at 0:10.0", 0, 1);
        return;
    }
    pci_write(SKX_IMC_SOCKET1, SKX_CHAN_SEL0, sel);
    check("uncore: socket 1's channel 0 takes an event select",
          pci_read(SKX_IMC_SOCKET1, SKX_CHAN_SEL0), sel);
    for (i = 0; i < sizeof(stub); i++) {
        ((volatile uint8_t *)AP_STUB)[i] = stub[i];
    }
    *flag = 0;
    apic[0xf0 / 4] = 0x1ff;             /* SVR: APIC software-enabled */
    ipi(1, 0x4500);                     /* INIT, level assert */
    t0 = rdtsc();
    while (rdtsc() - t0 < (1u << 24)) {
        __asm__ volatile("pause");
    }
    ipi(1, 0x4600 | (AP_STUB >> 12));   /* SIPI */
    t0 = rdtsc();
    while (!*flag && rdtsc() - t0 < AP_BUDGET) {
        __asm__ volatile("pause");
    }
    if (!*flag) {
        puts("# CPU 1 did not run its SIPI stub in 2^36 TSC ticks (the "
             "host was slow?)\n");
    }
    check("INIT-SIPI: socket 1's first CPU ran its stub", *flag, 1);
    check("... and socket 1's uncore kept the event select through its INIT",
          pci_read(SKX_IMC_SOCKET1, SKX_CHAN_SEL0), sel);
}

/*
 * AMD LbrAndPmcFreeze (Fn8000_0022_EAX[2]): with DebugCtl.FLBRI (bit 11)
 * a PMI sets PerfCntrGlobalStatus.LbrFreeze (bit 58), which stops the LBR
 * stack and the counters until PerfCntrGlobalStatusClr clears it (APM
 * vol. 2, "Last Branch Record Stack" and "LBR and PMC Freeze"; Linux
 * ca5b7c0d9621, which added LbrExtV2: the freeze keeps the stack from
 * any update once a counter overflows, until the PMI handler clears the
 * freeze bit).  Retired instructions on PerfCtr0 overflow into a PMI (NMI);
 * the handler reads LBR entry 0 (the newest, LbrExtV2's
 * MSR_AMD_SAMP_BR_FROM/TO at C0010300H/301H, Linux amd/lbr.c), runs 100
 * taken branches, reads it again, clears the status, runs them again and
 * reads it a third time.
 */
#define AMD_PERF_CTL0 0xc0010200
#define AMD_PERF_CTR0 0xc0010201
#define AMD_GLOBAL_STATUS 0xc0000300
#define AMD_GLOBAL_CTL 0xc0000301
#define AMD_GLOBAL_STATUS_CLR 0xc0000302
#define AMD_DBG_EXTN_CFG 0xc000010f    /* bit 6 LBRV2EN */
#define AMD_LBR_FROM0 0xc0010300
#define MSR_DEBUGCTL 0x1d9              /* bit 11 FLBRI */

uint64_t amd_status, amd_lbr[3][2];
void amd_nmi_handler(void);
void amd_pmi(void);
__asm__(".globl amd_nmi_handler\namd_nmi_handler:\n\t"
        "pusha\n\tcall amd_pmi\n\tincl nmis_seen\n\tpopa\n\tiret\n");

void amd_pmi(void)
{
    amd_status = rdmsr(AMD_GLOBAL_STATUS);
    amd_lbr[0][0] = rdmsr(AMD_LBR_FROM0);
    amd_lbr[0][1] = rdmsr(AMD_LBR_FROM0 + 1);
    (void)timed_loop_body(100);
    amd_lbr[1][0] = rdmsr(AMD_LBR_FROM0);
    amd_lbr[1][1] = rdmsr(AMD_LBR_FROM0 + 1);
    wrmsr(AMD_GLOBAL_STATUS_CLR, amd_status);
    (void)timed_loop_body(100);
    amd_lbr[2][0] = rdmsr(AMD_LBR_FROM0);
    amd_lbr[2][1] = rdmsr(AMD_LBR_FROM0 + 1);
}

static void amd_lbr_freeze(void)
{
    volatile uint32_t *apic = (volatile uint32_t *)0xfee00000;
    uint32_t a, b, c, d;

    cpuid(0x80000022, &a, &b, &c, &d);
    if (!(a & 4)) {
        check("AMD: CPUID Fn8000_0022_EAX[2] LbrAndPmcFreeze", a & 4, 4);
        return;
    }
    set_gate(2, amd_nmi_handler);
    nmis_seen = 0;
    apic[0xf0 / 4] = 0x1ff;             /* SVR: APIC software-enabled */
    apic[0x340 / 4] = 0x400;            /* LVTPC: NMI */
    wrmsr(AMD_GLOBAL_CTL, 0);
    wrmsr(MSR_DEBUGCTL, 1u << 11);
    wrmsr(AMD_DBG_EXTN_CFG, 1u << 6);
    /* Retired instructions, OS and USR, INT, EN; 1000 to the overflow. */
    wrmsr(AMD_PERF_CTL0, 0xc0 | SEL_OS_USR_EN | (1u << 20));
    wrmsr(AMD_PERF_CTR0, (1ull << 48) - 1000);
    wrmsr(AMD_GLOBAL_CTL, 1);
    (void)timed_loop_body(100000);
    wrmsr(AMD_GLOBAL_CTL, 0);
    wrmsr(AMD_PERF_CTL0, 0);
    wrmsr(AMD_DBG_EXTN_CFG, 0);
    wrmsr(MSR_DEBUGCTL, 0);
    apic[0x340 / 4] = 0x10000;          /* LVTPC masked */
    check("AMD LbrAndPmcFreeze: one PMI, LbrFreeze (bit 58) set in it",
          nmis_seen == 1 && (amd_status >> 58) & 1, 1);
    check("LbrFreeze: LBR entry 0 unchanged over 100 branches in the PMI "
          "handler",
          amd_lbr[1][0] == amd_lbr[0][0] && amd_lbr[1][1] == amd_lbr[0][1], 1);
    check("LbrFreeze cleared: the LBR stack records again",
          amd_lbr[2][0] != amd_lbr[1][0] || amd_lbr[2][1] != amd_lbr[1][1], 1);
}

/*
 * PERF_METRICS (MSR 329H, IA32_PERF_CAPABILITIES[15]): the slots
 * IA32_FIXED_CTR3 counts, divided into top-down classes (SDM vol. 3B,
 * "Performance Metrics").  Level 1 (bytes 0-3: retiring, bad speculation,
 * frontend bound, backend bound) from Ice Lake on: Linux 59a854e2f3b9
 * ("perf/x86/intel: Support TopDown metrics on Ice Lake") reads four
 * metrics on Ice Lake client and server alike.  Level 2 (bytes 4-7) from
 * Golden Cove on: Linux sets num_topdown_events = 8 for Sapphire Rapids
 * and in intel_pmu_init_glc(), where Lion Cove's intel_pmu_init_lnc()
 * starts; each level-2 byte is a part of a level-1 class (Intel's
 * TMA_Metrics-full.csv): heavy operations of retiring, branch mispredicts
 * of bad speculation, fetch latency of frontend bound, memory bound of
 * backend bound.  FIXED_CTR3 counts the slots of a loop with PERF_METRICS
 * enabled (GLOBAL_CTRL bits 35 and 48); MSR 329H then has level-1 bytes.
 */
#define MSR_FIXED_CTR3 0x30c
#define MSR_PERF_METRICS 0x329
#define MSR_PERF_CAPABILITIES 0x345

static void put_metrics(uint64_t m)
{
    unsigned i;

    puts("# PERF_METRICS 0x");
    for (i = 16; i-- > 0;) {
        put_char("0123456789abcdef"[(m >> (4 * i)) & 0xf]);
    }
    puts("\n");
}

/* A loop of 100000 iterations with FIXED_CTR3 and PERF_METRICS counting. */
static void count_a_loop(void)
{
    wrmsr(MSR_FIXED_CTR_CTRL, 0x3u << 12);
    wrmsr(MSR_GLOBAL_CTRL, (1ull << 48) | (1ull << 35));
    (void)timed_loop_body(100000);
    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_FIXED_CTR_CTRL, 0);
}

static uint64_t perf_metrics_of_a_loop(void)
{
    uint64_t m;

    wrmsr(MSR_GLOBAL_CTRL, 0);
    wrmsr(MSR_FIXED_CTR3, 0);
    wrmsr(MSR_PERF_METRICS, 0);
    count_a_loop();
    m = rdmsr(MSR_PERF_METRICS);
    put_metrics(m);
    return m;
}

/*
 * Level 1 filled, and level 2 when the core has it, within level 1; Ice
 * Lake fills level 1 only (Linux 59a854e2f3b9: 4 top-down events), so its
 * bytes 4-7 stay 0.
 */
static uint64_t perf_metrics_levels(bool level2, const char *core)
{
    static const char *const parts[4] = {
        "heavy operations <= retiring",
        "branch mispredicts <= bad speculation",
        "fetch latency <= frontend bound",
        "memory bound <= backend bound",
    };
    uint64_t m = perf_metrics_of_a_loop();
    uint32_t l1 = (uint32_t)m, l2 = (uint32_t)(m >> 32);
    unsigned i;

    check("PERF_METRICS level 1 filled over 100000 iterations", l1 != 0, 1);
    puts("# ");
    puts(core);
    puts(":\n");
    if (!level2) {
        check("PERF_METRICS level 1 only (bytes 4-7 all 0)", l2 == 0, 1);
        return m;
    }
    check("PERF_METRICS level 2 filled (bytes 4-7 not all 0)", l2 != 0, 1);
    for (i = 0; i < 4; i++) {
        check(parts[i], ((l2 >> (8 * i)) & 0xff) <=
              ((l1 >> (8 * i)) & 0xff) + 1, 1);
    }
    return m;
}

/* #GP (vector 13, with an error code) skips a 2-byte WRMSR and is counted. */
volatile uint32_t gp_faults;
void gp_skip_handler(void);
__asm__(".globl gp_skip_handler\ngp_skip_handler:\n\t"
        "addl $4, %esp\n\t"
        "addl $2, (%esp)\n\t"
        "incl gp_faults\n\t"
        "iret\n");

static uint64_t rdpmc_metrics(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(1u << 29));
    return (uint64_t)hi << 32 | lo;
}

/*
 * A task switched out and back in: Linux writes back FIXED_CTR3, then
 * PERF_METRICS, as it read them at the switch-out (Linux 2cb5383b30d4
 * "perf/x86/intel: Support per-thread RDPMC TopDown metrics",
 * icl_set_topdown_event_period; "The fixed counter 3 has to be written
 * before the PERF_METRICS").  The value restored here is all backend bound
 * over the slots of the loop just counted: it reads back as written, and
 * one more loop counted on puts each level-1 byte between the two values
 * by their slots (each byte a fraction of the slots: SDM vol. 3B,
 * "Performance Metrics").
 */
static void perf_metrics_restore(uint64_t loop, bool level2)
{
    static const char *const names[4] = {
        "restored, then a loop: retiring between the two by their slots",
        "restored, then a loop: bad speculation between the two",
        "restored, then a loop: frontend bound between the two",
        "restored, then a loop: backend bound between the two",
    };
    uint64_t w = 0xffull << 24 | (level2 ? 0xffull << 56 : 0), m;
    uint32_t faults = gp_faults, s1, s2, i;

    set_gate(13, gp_skip_handler);
    wrmsr(MSR_GLOBAL_CTRL, 0);
    s1 = (uint32_t)rdmsr(MSR_FIXED_CTR3);
    wrmsr(MSR_FIXED_CTR3, s1);
    wrmsr(MSR_PERF_METRICS, w);
    check("WRMSR of a saved PERF_METRICS value taken (#GP count)",
          gp_faults - faults, 0);
    check("PERF_METRICS reads back the value written",
          rdmsr(MSR_PERF_METRICS) == w, 1);
    check("RDPMC 1 << 29 reads the value written", rdpmc_metrics() == w, 1);
    count_a_loop();
    s2 = (uint32_t)rdmsr(MSR_FIXED_CTR3) - s1;
    m = rdmsr(MSR_PERF_METRICS);
    put_metrics(m);
    for (i = 0; i < 4; i++) {
        uint32_t wb = (w >> (8 * i)) & 0xff, lb = (loop >> (8 * i)) & 0xff;
        uint32_t want = (wb * s1 + lb * s2 + (s1 + s2) / 2) / (s1 + s2);
        uint32_t got = (m >> (8 * i)) & 0xff;

        check(names[i], got + 2 >= want && got <= want + 2, 1);
    }
    if (!level2) {
        check("restored, then a loop: bytes 4-7 still 0", (uint32_t)(m >> 32), 0);
    }
}

/* Lion Cove (the lunarlake-p shape). */
static void td_level2(void)
{
    (void)perf_metrics_levels(true, "Lion Cove");
}

/* Ice Lake SP (06_6AH) and Sapphire Rapids (06_8FH): the bit, then the MSR. */
static void perf_metrics_enumerated(bool level2, const char *core)
{
    uint64_t caps = rdmsr(MSR_PERF_CAPABILITIES);

    check("IA32_PERF_CAPABILITIES[15] PERF_METRICS_AVAILABLE",
          (caps >> 15) & 1, 1);
    if ((caps >> 15) & 1) {
        perf_metrics_restore(perf_metrics_levels(level2, core), level2);
    }
}

static void perf_metrics_icx(void)
{
    perf_metrics_enumerated(false, "Ice Lake SP");
}

static void perf_metrics_spr(void)
{
    perf_metrics_enumerated(true, "Sapphire Rapids");
}

/*
 * UNC_CBO_CACHE_LOOKUP (event 34H) counts a lookup under the unit-mask bit
 * of the state it found the line in (Intel perfmon skylake_uncore.json,
 * haswell_uncore.json, sandybridge_uncore.json: .ANY_M 81H "found line in
 * M-state", .ANY_ES 86H "in E or S-state", .ANY_I 88H "in I-state").  On a
 * one-core Skylake client (one C-box: C-box 0's selects at 700H/701H,
 * counters at 706H/707H, MSR_UNC_PERF_GLOBAL_CTL E01H bit 29; SDM vol. 4,
 * the 6th-10th generation uncore MSRs; Linux uncore_snb.c) K lines A_i,
 * and K lines B_i that share A_i's place in the L2 but not in the LLC
 * (the emulator's caches, emu/qemu/README.md: a 1 MiB direct-mapped L2,
 * an 8 MiB LLC), go through: flushed A, B loaded (misses: I), A loaded
 * again (L2 misses that find A clean in the LLC: E or S); then A stored
 * (L2 hits), B and A loaded again (B clean: E or S; A modified: M).
 */
#define UNC_GLOBAL_CTL 0xe01
#define UNC_CBO0_SEL 0x700
#define UNC_CBO0_CTR 0x706
#define CBO_LINES 64
#define CBO_A 0x1000000u
#define CBO_B (CBO_A + 0x100000u)

static void load_lines(uint32_t base)
{
    unsigned i;

    for (i = 0; i < CBO_LINES; i++) {
        (void)*(volatile uint32_t *)(uintptr_t)(base + 64 * i);
    }
}

/* C-box 0's two counters over one pass of `run`, under umasks u0 and u1. */
static void cbo_window(uint32_t u0, uint32_t u1, void (*run)(void),
                       uint32_t *n0, uint32_t *n1)
{
    uint64_t b0, b1;

    wrmsr(UNC_GLOBAL_CTL, 0);
    wrmsr(UNC_CBO0_SEL, 0x34 | u0 << 8 | (1u << 22));
    wrmsr(UNC_CBO0_SEL + 1, 0x34 | u1 << 8 | (1u << 22));
    b0 = rdmsr(UNC_CBO0_CTR);
    b1 = rdmsr(UNC_CBO0_CTR + 1);
    wrmsr(UNC_GLOBAL_CTL, 1u << 29);
    run();
    wrmsr(UNC_GLOBAL_CTL, 0);
    *n0 = (uint32_t)(rdmsr(UNC_CBO0_CTR) - b0);
    *n1 = (uint32_t)(rdmsr(UNC_CBO0_CTR + 1) - b1);
    wrmsr(UNC_CBO0_SEL, 0);
    wrmsr(UNC_CBO0_SEL + 1, 0);
}

static void cbo_misses_then_clean(void)
{
    load_lines(CBO_A);
    load_lines(CBO_B);
    load_lines(CBO_A);
}

static void cbo_clean_then_modified(void)
{
    load_lines(CBO_B);
    load_lines(CBO_A);
}

static void cbo_lookup_state(void)
{
    uint32_t n0, n1;
    unsigned i;

    if ((rdmsr(0x396) & 0xf) != 1) {
        check("uncore: one C-box (MSR_UNC_CBO_CONFIG[3:0])",
              (uint32_t)rdmsr(0x396) & 0xf, 1);
        return;
    }
    for (i = 0; i < CBO_LINES; i++) {
        __asm__ volatile("clflush (%0)" : : "r"(CBO_A + 64 * i) : "memory");
        __asm__ volatile("clflush (%0)" : : "r"(CBO_B + 64 * i) : "memory");
    }
    cbo_window(0x88, 0x86, cbo_misses_then_clean, &n0, &n1);
    check("C-box lookups found in I (ANY_I 88H): A and B missed", n0,
          2 * CBO_LINES);
    check("... in E or S (ANY_ES 86H): A found clean", n1, CBO_LINES);
    for (i = 0; i < CBO_LINES; i++) {
        *(volatile uint32_t *)(uintptr_t)(CBO_A + 64 * i) = i;
    }
    cbo_window(0x81, 0x86, cbo_clean_then_modified, &n0, &n1);
    check("C-box lookups found in M (ANY_M 81H): A stored to", n0, CBO_LINES);
    check("... in E or S (ANY_ES 86H): B found clean", n1, CBO_LINES);
}

/* Host TSC ticks for `n` iterations of DEC/JNZ with PMC0 set to `sel`. */
static uint32_t timed_loop(uint32_t sel, uint32_t n)
{
    uint64_t t0, t1;

    wrmsr(MSR_PERFEVTSEL0, sel);
    wrmsr(MSR_PERFEVTSEL0 + 1, 0);
    wrmsr(MSR_GLOBAL_CTRL, 1);
    t0 = rdtsc();
    __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
    t1 = rdtsc();
    wrmsr(MSR_GLOBAL_CTRL, 0);
    return (uint32_t)(t1 - t0);
}

static void cost(void)
{
    static const struct {
        const char *what;
        uint32_t sel;
    } modes[] = {
        { "not counting (no TB accounting)", 0 },
        { "counting instructions (fast mode)", 0xc0 | SEL_OS_USR_EN },
        { "counting with CMASK=1 (step mode)",
          0xc0 | SEL_OS_USR_EN | (1u << 24) },
    };
    uint32_t best[3];
    unsigned m, r;

    for (m = 0; m < 3; m++) {
        best[m] = ~0u;
        for (r = 0; r < 5; r++) {
            uint32_t t = timed_loop(modes[m].sel, m == 2 ? 1000000 : 10000000);

            best[m] = t < best[m] ? t : best[m];
        }
        puts("# ");
        puts(modes[m].what);
        puts(": ");
        putu(best[m] / (m == 2 ? 1000 : 10000));
        puts(" TSC ticks per 1000 iterations (best of 5)\n");
    }
}

/* Is `word` in the multiboot command line? */
static bool cmdline_has(uint32_t magic, uint32_t mbi, const char *word)
{
    const char *p;

    /* Multiboot 1: EAX magic, info flags bit 2, cmdline at offset 16. */
    if (magic != 0x2badb002 || !(*(const uint32_t *)(uintptr_t)mbi & 4)) {
        return false;
    }
    for (p = (const char *)(uintptr_t)*(const uint32_t *)(uintptr_t)(mbi + 16);
         *p; p++) {
        const char *a = p, *w = word;

        while (*w && *a == *w) {
            a++, w++;
        }
        if (!*w) {
            return true;
        }
    }
    return false;
}

/*
 * hv-sig (patch 0040), with which make emu-selftest starts QEMU, shows only
 * in long mode: firmware, like this 32-bit kernel, still sees TCG's
 * signature at 0x40000000 (highest leaf 0x40000001) and nothing at
 * 0x40000100.  (The 64-bit side shows in pmutest's own boot lines.)
 */
static void hypervisor_leaves(void)
{
    uint32_t a, b, c, d;

    cpuid(0x40000000, &a, &b, &c, &d);
    check("hv-sig before long mode: CPUID 0x40000000 EAX", a, 0x40000001);
    check("hv-sig before long mode: TCG's signature at 0x40000000",
          b == 0x54474354 && c == 0x43544743 && d == 0x47435447, 1);
    cpuid(0x40000100, &a, &b, &c, &d);
    check("hv-sig before long mode: no signature at 0x40000100",
          b == 0x54474354 || b == 0x4b4d564b, 0);
}

static void report(void)
{
    puts("# emu-selftest: ");
    putu(passes);
    puts(" passed, ");
    putu(failures);
    puts(" failed, 0 skipped\n");
    outb(DEBUG_EXIT, failures ? 0x11 : 0x10);
}

/*
 * A run for one departure from silicon, on the CPU and machine make
 * emu-selftest gives it, named on the command line: only its cases.
 */
static bool one_case(uint32_t magic, uint32_t mbi)
{
    static const struct {
        const char *word;
        void (*run)(void);
    } cases[] = {
        { "uncore-init", uncore_init },
        { "ref-tsc", gp_ref_clock },
        { "amd-lbr-freeze", amd_lbr_freeze },
        { "td-level2", td_level2 },
        { "perf-metrics-icx", perf_metrics_icx },
        { "perf-metrics-spr", perf_metrics_spr },
        { "cbo-lookup-state", cbo_lookup_state },
    };
    unsigned i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cmdline_has(magic, mbi, cases[i].word)) {
            puts("# ");
            puts(cases[i].word);
            puts(" only\n");
            outb(0x21, 0xff);
            outb(0xa1, 0xff);
            load_gdt();
            load_idt();
            cases[i].run();
            return true;
        }
    }
    return false;
}

void main32(uint32_t magic, uint32_t mbi)
{
    uint32_t a, b, c, d;

    puts("emu selftest: the emulated PMU's counting conventions\n");
    if (one_case(magic, mbi)) {
        report();
    }
    if (cmdline_has(magic, mbi, "delivery-retires")) {
        delivery = 1;
        puts("# pmu-delivery-retires: exception delivery counts\n");
    }
    cpuid(0, &a, &b, &c, &d);
    if (b != 0x756e6547 || a < 0xa) {
        puts("# emu-selftest: 0 passed, 0 failed, 1 skipped (needs an Intel "
             "CPU model with pmu=on)\n");
        outb(DEBUG_EXIT, 0x10);
    }
    cpuid(0xa, &a, &b, &c, &d);
    if ((a & 0xff) < 2) {
        puts("# emu-selftest: 0 passed, 0 failed, 1 skipped (needs "
             "architectural PMU version 2)\n");
        outb(DEBUG_EXIT, 0x10);
    }
    /*
     * The firmware leaves the 8259 PICs' timer IRQ unmasked at vectors
     * 08h-0Fh, through the local APIC's LINT0 (ExtINT).  IF is set only in
     * pmi_before_interrupt's window, where a timer tick made pending since
     * boot would be delivered through gate 8, which is empty: a triple fault
     * whose odds grow with the host's load.  Mask every legacy IRQ (OCW1,
     * IMR = FFh on both PICs).
     */
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
    load_gdt();
    load_idt();
    hypervisor_leaves();
    conventions();
    model_specific_events();
    pmi_before_interrupt();
    pmi_on_time();
    pause_ref_cycles();
    hlt_ref_cycles();
    privilege();
    cost();
    report();
}
