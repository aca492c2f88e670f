"""The mutant generator's own test: a C file with every kind of site, rewritten
by harness/mutgen.py, compiled with the host's cc and run once per mutant.
Mutant 0 must print what the original prints, every mutant must compile,
and each must change what it says it changes (most of them the output).

  python3 -m harness.test_mutgen      # prints "mutgen-selftest: N passed, M failed, K skipped"
"""
import os
import subprocess
import sys
import tempfile

from harness import mutgen

SAMPLE = r'''
#include <stdio.h>
#include <stdint.h>
#include <stdbool.h>

#define MASK 0xf0

struct s { int a[4]; };
static const int table[3] = { 1, 2, 3 };

static int pick(int x, int y)
{
    static int calls = 0;
    int arr[4] = { 0 };

    calls++;
    if (x < y && y != 7) {
        return x;
    }
    switch (x) {
    case 2 + 1:
        return 33;
    default:
        break;
    }
    arr[1] = y;
    return arr[1] + table[0];
}

static uint64_t bits(uint64_t v)
{
    uint64_t r = v & ~0xffull;

    r |= (v >> 4) & 0xf;
    r ^= 1ull << 3;
    for (int i = 0; i < 3; i++) {
        r += i;
    }
    return r + (bool)true;
}

int main(void)
{
    struct s st = { { 1, 2, 3, 4 } };

    printf("%d %d %d\n", pick(1, 2), pick(3, 1), pick(5, 7));
    printf("%llu %d\n", (unsigned long long)bits(0x12345), st.a[2]);
    return 0;
}
'''


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        orig = os.path.join(d, 'orig.c')
        with open(orig, 'w') as f:
            f.write(SAMPLE)
        site = mutgen.Site(SAMPLE)
        for n, m in enumerate(site.mutants, 1):
            m.id = n
        text = mutgen.DECL + site.render_file(mutgen.selector)
        text += mutgen.DEFINE % {'n': len(site.mutants) + 1}
        mut = os.path.join(d, 'mut.c')
        with open(mut, 'w') as f:
            f.write('#include <stdlib.h>\n' + text)
        for src, exe in ((orig, 'orig'), (mut, 'mut')):
            p = run(['cc', '-std=gnu11', '-Wall', '-Werror', '-Wno-unused', '-o', os.path.join(d, exe), src])
            if p.returncode:
                print('not ok compile %s: %s' % (exe, p.stdout[-2000:]))
                print('mutgen-selftest: 0 passed, 1 failed, 0 skipped')
                return 1
        want = run([os.path.join(d, 'orig')]).stdout
        got = run([os.path.join(d, 'mut')], env=dict(os.environ, X86PMU_MUTANT='0')).stdout
        if got == want:
            passed += 1
        else:
            failed += 1
            print('not ok mutant 0 prints %r, the original %r' % (got, want))
        kinds = {m.kind for m in site.mutants}
        for k in ('negate', 'op', 'const', 'remove'):
            if k in kinds:
                passed += 1
            else:
                failed += 1
                print('not ok no %s mutant generated' % k)
        lines = {site.t[m.s].line for m in site.mutants}
        # Nothing outside function bodies, in case labels, initialisers or static locals.
        for bad in (SAMPLE.split('\n').index(x) + 1 for x in SAMPLE.split('\n')
                    if 'case 2' in x or 'table[3]' in x or 'static int calls' in x or 'arr[4]' in x):
            if bad in lines:
                failed += 1
                print('not ok a mutant on line %d, which must not be mutated' % bad)
            else:
                passed += 1
        changed = 0
        for m in site.mutants:
            out = run([os.path.join(d, 'mut')], env=dict(os.environ, X86PMU_MUTANT=str(m.id))).stdout
            changed += out != want
        # Most mutants of this program change its output (the others are
        # equivalent here: e.g. calls++ removed, never printed).
        if changed * 2 > len(site.mutants):
            passed += 1
        else:
            failed += 1
            print('not ok only %d of %d mutants changed the output' % (changed, len(site.mutants)))
        print('# %d mutants, %d changed the output' % (len(site.mutants), changed))
    print('mutgen-selftest: %d passed, %d failed, 0 skipped' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
