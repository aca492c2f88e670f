/*
 * A check of the emulated PMU's counting conventions (emu/qemu/README.md,
 * "Counting conventions") and a measure of what counting costs, as a
 * tiny 32-bit multiboot kernel: each window is WRMSR (enable), a body,
 * MOV, MOV, WRMSR (disable), so instructions = body + 3 by the
 * conventions; the expected body counts below are the conventions
 * written as numbers.  Prints "ok"/"not ok" lines on COM1 and exits
 * through isa-debug-exit (0x10 all passed, 0x11 otherwise).
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
#define MSR_GLOBAL_CTRL 0x38f
#define SEL_OS_USR_EN ((1u << 16) | (1u << 17) | (1u << 22))

/* --- Multiboot (version 1) header, entry, stack --- */

__attribute__((section(".multiboot"), used, aligned(4)))
static const uint32_t multiboot_header[3] = {
    0x1badb002, 0, (uint32_t)-(0x1badb002 + 0),
};

uint8_t stack[16384] __attribute__((aligned(16)));
void main32(void);
__asm__(".globl _start\n_start:\n\t"
        "mov $stack + 16384, %esp\n\t"
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

static struct idt_entry idt[32];
void skip2_handler(void);
void return_handler(void);
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
    __asm__ volatile("lidt %0" : : "m"(d));
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
    check("UD2 faults: not counted; its handler's 2 are",
          (uint32_t)rdmsr(MSR_PMC0), 2 + 3);
    check("UD2: the handler's IRET is the one branch", (uint32_t)rdmsr(MSR_PMC0 + 1), 1);

    arm(0xc0 | SEL_OS_USR_EN);
    START();
    __asm__ volatile(WINDOW("xor %%ebx, %%ebx\n\tdiv %%ebx")
                     : REGS : : "memory", "cc", "ebx");
    check("DIV by 0 faults: XOR and the handler's 2", (uint32_t)rdmsr(MSR_PMC0),
          1 + 2 + 3);

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

void main32(void)
{
    uint32_t a, b, c, d;

    puts("emu selftest: the emulated PMU's counting conventions\n");
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
    load_idt();
    hypervisor_leaves();
    conventions();
    cost();
    puts("# emu-selftest: ");
    putu(passes);
    puts(" passed, ");
    putu(failures);
    puts(" failed, 0 skipped\n");
    outb(DEBUG_EXIT, failures ? 0x11 : 0x10);
}
