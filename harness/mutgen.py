"""The mutant generator of `make mutants` (harness/mutants.py runs them).

It reads C sources, finds mutation sites inside function bodies and writes
a copy of each file in which every site carries all its mutants as
run-time choices:

    a < b            ->  (X86PMU_M(12) ? (a <= b) : (a < b))
    x = f(y);        ->  { if (!X86PMU_M(13)) { x = f(y); } }

X86PMU_M(n) is spelled out (no macro: the copies keep their line numbers,
the declarations go on line 1) as `x86pmu_mutant == n` plus a coverage
mark (a load and compare while X86PMU_COVERAGE is set).  The mutant id comes from the environment variable
X86PMU_MUTANT, read once when QEMU starts; 0, or no variable, is the
unmutated emulator.  X86PMU_COVERAGE=FILE makes the binary write, at exit,
"id epoch" pairs: the mutants whose site ran, each with every serial line
(the count of newlines the guest had written, hw/char/serial.c hooked)
during which it ran; harness/mutants.py maps them to profiles and tests.

It only ever writes into the QEMU build tree (emu/qemu/build.sh
--mutants calls `instrument`); the repository's sources are read.

Which sites (docs/mutants.md, "What is mutated"):
- conditions of if/while/for negated;
- comparison operators changed (< <=, > >=, == !=), && and || swapped;
- bit operators: & and | swapped, ^ to |, << and >> swapped, ~ removed;
- integer constants +1 and -1, a mask's lowest set bit cleared;
  true and false swapped;
- expression statements (assignments, calls) removed.
Not mutated: anything outside function bodies (tables of shapes, property
lists, enums), preprocessor lines, initialiser lists, case labels,
declarators' array sizes, static locals, sizeof/offsetof/typeof, and the
arguments of assertions and of logging/error reporting (what the guest
cannot see, or a crash the suite would get for free).

Each mutant has a stable identity, independent of line numbers:
FILE:FUNCTION:HASH, the hash over the site's tokens, the change, and the
site's rank among identical sites of that function.

  python3 -m harness.mutgen list                 # the catalogue (TSV) of the repository's sources
  python3 -m harness.mutgen instrument TREE OUT  # rewrite TREE (a QEMU tree), catalogue to OUT
"""
import glob
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (repository path, path inside the QEMU tree, functions or None = all):
# every file of emu/model, and its one private header with function bodies.
SOURCES = [('emu/model/' + f, 'target/i386/' + f, None) for f in sorted(
    [os.path.basename(p) for p in glob.glob(os.path.join(ROOT, 'emu', 'model', 'x86-pmu-*.c'))] +
    ['x86-pmu-pebs.h'])] + [
    ('emu/qemu/files/target/i386/tcg/sysemu/pmu.c', 'target/i386/tcg/sysemu/pmu.c', None),
    # The PMI's delivery through the LVT (patch 0002), in QEMU's apic.c.
    ('emu/qemu/patches/0002-apic-deliver-pmi.patch:hw/intc/apic.c', 'hw/intc/apic.c', {'apic_deliver_pmi'}),
]
# The file that defines the selector (QEMU glue, not the MIT model).
DEFINER = 'target/i386/tcg/sysemu/pmu.c'

TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.)*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<num>0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?[uUlLfF]*)
  | (?P<id>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!=<>]=|[-+*/%&|^~!=<>?:;,.(){}\[\]])
''', re.S | re.M | re.X)

KEYWORDS = {'if', 'else', 'while', 'for', 'do', 'switch', 'case', 'default', 'return', 'break',
            'continue', 'goto', 'sizeof', 'static', 'const', 'struct', 'union', 'enum', 'unsigned',
            'signed', 'int', 'char', 'long', 'short', 'bool', 'void', 'float', 'double', 'volatile',
            'inline', 'typedef', 'extern', 'register', '__attribute__', 'typeof', '__typeof__'}
TYPE_WORDS = {'static', 'const', 'struct', 'union', 'enum', 'unsigned', 'signed', 'int', 'char',
              'long', 'short', 'bool', 'void', 'float', 'double', 'volatile', 'register', 'typeof'}
# Calls whose arguments are not mutated: compile-time, assertions, and
# messages (nothing a guest sees; a broken assertion is a free kill).
NO_MUTATE_CALLS = re.compile(r'^(sizeof|offsetof|typeof|__typeof__|__attribute__|_Static_assert|'
                             r'QEMU_BUILD_BUG_ON\w*|__builtin_\w+|g_assert\w*|assert|tcg_debug_assert|'
                             r'qemu_log\w*|error_\w+|warn_\w+|info_report|printf|fprintf|snprintf|'
                             r'g_strdup\w*|trace_\w+|stringify|glue)$')
NO_REMOVE_CALLS = re.compile(r'^(g_assert\w*|assert|tcg_debug_assert|qemu_log\w*|error_\w+|warn_\w+|'
                             r'info_report|printf|fprintf|trace_\w+|g_free|qemu_mutex_\w+|'
                             r'bql_\w+|qemu_\w*lock\w*)$')

PREC = {'*': 13, '/': 13, '%': 13, '+': 12, '-': 12, '<<': 11, '>>': 11, '<': 10, '<=': 10, '>': 10,
        '>=': 10, '==': 9, '!=': 9, '&': 8, '^': 7, '|': 6, '&&': 5, '||': 4}
STOP = {'(', '[', '{', ')', ']', '}', ',', ';', '?', ':', '=', '+=', '-=', '*=', '/=', '%=', '&=',
        '|=', '^=', '<<=', '>>='}
ASSIGN = {'=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>='}
UNARY = {'!', '~', '-', '+', '*', '&', '++', '--'}
OP_CHANGES = {'<': ['<='], '<=': ['<'], '>': ['>='], '>=': ['>'], '==': ['!='], '!=': ['=='],
              '&&': ['||'], '||': ['&&'], '&': ['|'], '|': ['&'], '^': ['|'], '<<': ['>>'],
              '>>': ['<<']}


class Tok:
    __slots__ = ('kind', 'text', 'start', 'end', 'line')

    def __init__(self, kind, text, start, end, line):
        self.kind, self.text, self.start, self.end, self.line = kind, text, start, end, line


def tokenize(src):
    toks, pos, line = [], 0, 1
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            raise ValueError('cannot tokenize at line %d: %r' % (line, src[pos:pos + 20]))
        kind = m.lastgroup
        if kind not in ('ws', 'comment', 'pp'):
            toks.append(Tok(kind, m.group(), m.start(), m.end(), line))
        line += m.group().count('\n')
        pos = m.end()
    return toks


class Mutant:
    __slots__ = ('s', 'e', 'kind', 'change', 'make', 'func', 'line', 'ident', 'id', 'file', 'tokens')

    def __init__(self, s, e, kind, change, make):
        self.s, self.e, self.kind, self.change, self.make = s, e, kind, change, make
        self.id = 0


class Site:
    """The sites of one source file."""

    def __init__(self, src, functions=None):
        self.src = src
        self.t = tokenize(src)
        self.functions = functions
        self.match = self._match()
        self.mutants = []
        self._find()

    def _match(self):
        stack, match = [], {}
        pairs = {')': '(', ']': '[', '}': '{'}
        for i, tok in enumerate(self.t):
            if tok.text in ('(', '[', '{'):
                stack.append(i)
            elif tok.text in pairs:
                j = stack.pop()
                if self.t[j].text != pairs[tok.text]:
                    raise ValueError('unbalanced %s at line %d' % (tok.text, tok.line))
                match[i], match[j] = j, i
        return match

    # --- operand extents (a small precedence scanner)
    def ender(self, j):
        """Does token j end an operand (so that the next -,*,& is binary)?"""
        if j < 0:
            return False
        tok = self.t[j]
        if tok.kind in ('num', 'str'):
            return True
        if tok.kind == 'id':
            return tok.text not in KEYWORDS or tok.text in ('true', 'false')
        if tok.text == ']':
            return True
        if tok.text == ')':
            return not self.is_cast(j)
        return tok.text in ('++', '--') and self.ender(j - 1)

    def is_cast(self, close):
        """Is the group closed at `close` a cast: (type) or (type *)?"""
        o = self.match[close]
        inner = self.t[o + 1:close]
        if not inner or o == 0:
            return False
        if self.t[o - 1].kind == 'id' and self.t[o - 1].text not in KEYWORDS:
            return False                      # a call
        if self.t[o - 1].text in (')', ']'):
            return False
        words = [x.text for x in inner]
        if not all(x.kind == 'id' or x.text == '*' for x in inner):
            return False
        return words[0] in TYPE_WORDS or words[0].endswith('_t') or words[0][0].isupper() and len(words) <= 3

    def left(self, i, p):
        j = i - 1
        while j >= 0:
            tok = self.t[j]
            if tok.text in (')', ']'):
                j = self.match[j] - 1
                continue
            if tok.text in STOP or tok.text in ('return', 'case', 'else', 'do'):
                break
            if tok.kind in ('id', 'num', 'str') or tok.text in ('->', '.'):
                j -= 1
                continue
            if tok.text in UNARY and not self.ender(j - 1):
                j -= 1
                continue
            if tok.text in PREC and PREC[tok.text] > p:
                j -= 1
                continue
            break
        return j + 1

    def right(self, i, p):
        j = i + 1
        while j < len(self.t):
            tok = self.t[j]
            if tok.text in ('(', '['):
                j = self.match[j] + 1
                continue
            if tok.text in STOP:
                break
            if tok.kind in ('id', 'num', 'str') or tok.text in ('->', '.'):
                j += 1
                continue
            if tok.text in UNARY and not self.ender(j - 1):
                j += 1
                continue
            if tok.text in ('++', '--'):
                j += 1
                continue
            if tok.text in PREC and PREC[tok.text] > p:
                j += 1
                continue
            break
        return j

    # --- where the sites are
    def _find(self):
        t = self.t
        i = 0
        while i < len(t):
            if t[i].text == '{' and i > 0 and t[i - 1].text == ')':
                o = self.match[i - 1]
                name = t[o - 1].text if o > 0 and t[o - 1].kind == 'id' else None
                if name and name not in KEYWORDS and (self.functions is None or name in self.functions):
                    self._body(i + 1, self.match[i], name)
                i = self.match[i] + 1
                continue
            if t[i].text in ('{', '(', '['):
                i = self.match[i] + 1
                continue
            i += 1

    def _body(self, s, e, func):
        t = self.t
        skip = set()          # token indices not to mutate (expressions)
        decl_stmt = False
        stmt_start = True
        i = s
        while i < e:
            tok = t[i]
            if stmt_start and tok.text not in ('{', '}', ';'):
                stmt_start = False
                decl_stmt = self._is_decl(i)
                if decl_stmt and tok.text == 'static':
                    end = self._stmt_end(i, e)
                    skip.update(range(i, end + 1))
                elif not decl_stmt:
                    self._removal(i, e, func)
            if tok.text == 'case':
                j = i
                while j < e and t[j].text != ':':
                    j = self.match[j] + 1 if t[j].text in ('(', '[') else j + 1
                skip.update(range(i, j + 1))
                i = j + 1
                stmt_start = True
                continue
            if tok.text == 'default' and i + 1 < e and t[i + 1].text == ':':
                i += 2
                stmt_start = True
                continue
            if tok.kind == 'id' and i + 1 < e and t[i + 1].text == ':' and tok.text not in KEYWORDS \
                    and t[i - 1].text in (';', '{', '}'):
                i += 2                               # a label
                stmt_start = True
                continue
            if tok.kind == 'id' and NO_MUTATE_CALLS.match(tok.text) and i + 1 < e and t[i + 1].text == '(':
                skip.update(range(i, self.match[i + 1] + 1))
            if tok.text == '=' and i + 1 < e and t[i + 1].text == '{':
                skip.update(range(i, self.match[i + 1] + 1))
            if decl_stmt and tok.text == '[':
                skip.update(range(i, self.match[i] + 1))
            if tok.text in ('if', 'while', 'switch') and i + 1 < e and t[i + 1].text == '(':
                c = self.match[i + 1]
                if tok.text != 'switch' and i + 1 not in skip:
                    self._negate(i + 2, c, tok.text)
                self._expr(i + 2, c, skip)
                i = c + 1
                stmt_start = True
                continue
            if tok.text == 'for' and i + 1 < e and t[i + 1].text == '(':
                c = self.match[i + 1]
                semis = [j for j in range(i + 2, c) if t[j].text == ';']
                if len(semis) == 2 and semis[1] > semis[0] + 1:
                    self._negate(semis[0] + 1, semis[1], 'for')
                self._expr(i + 2, c, skip)
                i = c + 1
                stmt_start = True
                continue
            if tok.text in ('else', 'do'):
                i += 1
                stmt_start = True
                continue
            if tok.text in ('{', '}', ';'):
                stmt_start = True
                i += 1
                continue
            # The rest of the statement: an expression (or a declaration's
            # declarators and initialisers).
            j = self._stmt_end(i, e)
            k = i
            while k < j:
                if t[k].kind == 'id' and NO_MUTATE_CALLS.match(t[k].text) and t[k + 1].text == '(':
                    skip.update(range(k, self.match[k + 1] + 1))
                if t[k].text == '=' and t[k + 1].text == '{':
                    skip.update(range(k, self.match[k + 1] + 1))
                if decl_stmt and t[k].text == '[':
                    skip.update(range(k, self.match[k] + 1))
                k += 1
            self._expr(i, j, skip)
            i = j
        # The bodies of `if (x86pmu_defect(...))`: a deliberate bug of a
        # defect profile (pmu-defect=), not a rule of the manuals.
        defect = []
        for k in range(s, e - 1):
            if t[k].text == 'if' and t[k + 1].text == '(':
                c = self.match[k + 1]
                cond = t[k + 2:c]
                hits = [n for n, x in enumerate(cond) if x.text in ('x86pmu_defect', 'defect')]
                if hits and all(n == 0 or cond[n - 1].text != '!' for n in hits) \
                        and not any(x.text in ('||', '!=') for x in cond) and t[c + 1].text == '{':
                    defect.append((c + 1, self.match[c + 1]))
        self.mutants = [m for m in self.mutants
                        if m.func is not None or not any(a <= m.s <= b for a, b in defect)]
        for m in self.mutants:
            if m.func is None:
                m.func = func

    def _stmt_end(self, i, e):
        t = self.t
        while i < e and t[i].text not in (';', '{', '}'):
            if t[i].text in ('(', '['):
                i = self.match[i]
            i += 1
        if i < e and t[i].text == '{' and i > 0 and t[i - 1].text == '=':
            return self._stmt_end(self.match[i] + 1, e)
        return i

    def _is_decl(self, i):
        t = self.t
        a = t[i]
        if a.text in TYPE_WORDS:
            return True
        if a.kind != 'id' or a.text in KEYWORDS or i + 1 >= len(t):
            return False
        b = t[i + 1]
        if b.kind == 'id':
            return True
        if b.text == '(' and t[self.match[i + 1] + 1].kind == 'id':
            return True                  # a type macro: g_autoptr(GString) s = ...;
        if b.text == '*':
            k = i + 1
            while t[k].text == '*':
                k += 1
            return t[k].kind == 'id' and t[k + 1].text in ('=', ';', ',', '[')
        return False

    def _add(self, s, e, kind, change, make):
        m = Mutant(s, e, kind, change, make)
        m.func = None
        m.line = self.t[s].line
        self.mutants.append(m)

    def _negate(self, s, e, what):
        if s >= e:
            return
        self._add(s, e, 'negate', '%s condition negated' % what,
                  lambda r, s=s, e=e: '!(%s)' % r(s, e))

    def _removal(self, i, e, func):
        t = self.t
        a = t[i]
        if a.kind != 'id' or a.text in KEYWORDS or a.text in ('true', 'false'):
            return
        end = self._stmt_end(i, e)
        if end >= e or t[end].text != ';':
            return
        nxt = t[i + 1].text
        if nxt == '(' and NO_REMOVE_CALLS.match(a.text):
            return
        if nxt not in ASSIGN and nxt not in ('(', '->', '.', '[', '++', '--'):
            return
        if nxt == '(' and self.match[i + 1] + 1 == end and False:
            return
        self._add(i, end + 1, 'remove', 'statement removed',
                  lambda r, s=i, e=end + 1: ';')

    def _expr(self, s, e, skip):
        """The operator, constant and literal sites of tokens s..e-1."""
        t = self.t
        j = s
        while j < e:
            if j in skip:
                j += 1
                continue
            tok = t[j]
            if tok.text in OP_CHANGES and self.ender(j - 1):
                p = PREC[tok.text]
                a, b = self.left(j, p), self.right(j, p)
                if a < j < b and not any(k in skip for k in range(a, b)):
                    for new in OP_CHANGES[tok.text]:
                        self._add(a, b, 'op', '%s -> %s' % (tok.text, new),
                                  lambda r, a=a, b=b, j=j, new=new: '%s %s %s' % (r(a, j), new, r(j + 1, b)))
            elif tok.text == '~' and not self.ender(j - 1):
                b = self.right(j, 14)
                if b > j + 1:
                    self._add(j, b, 'op', '~ removed', lambda r, j=j, b=b: r(j + 1, b))
            elif tok.kind == 'num' and re.match(r'^(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*$', tok.text):
                digits = re.match(r'^(0[xX][0-9a-fA-F]+|[0-9]+)', tok.text).group(1)
                v = int(digits, 0)
                suffix = tok.text[len(digits):]
                self._add(j, j + 1, 'const', '%s -> %s + 1' % (tok.text, tok.text),
                          lambda r, x=tok.text: '(%s + 1)' % x)
                if v > 0:
                    self._add(j, j + 1, 'const', '%s -> %s - 1' % (tok.text, tok.text),
                              lambda r, x=tok.text: '(%s - 1)' % x)
                if digits.lower().startswith('0x') and bin(v).count('1') > 1:
                    new = '%#x%s' % (v & (v - 1), suffix)
                    self._add(j, j + 1, 'const', '%s -> %s (lowest set bit cleared)' % (tok.text, new),
                              lambda r, x=new: x)
            elif tok.text in ('true', 'false'):
                new = 'false' if tok.text == 'true' else 'true'
                self._add(j, j + 1, 'const', '%s -> %s' % (tok.text, new), lambda r, x=new: x)
            j += 1

    # --- rendering
    def gap(self, i, squash):
        """The text between token i and token i+1."""
        g = self.src[self.t[i].end:self.t[i + 1].start] if i + 1 < len(self.t) else ''
        if squash:
            return ' ' if g else ''
        return g

    def render_file(self, sel):
        """The whole file with every mutant in place; sel(id) is the selector text."""
        groups = {}
        for m in self.mutants:
            groups.setdefault((m.s, m.e), []).append(m)
        starts = {}
        for (s, e) in groups:
            starts.setdefault(s, []).append(e)
        # Drop spans that cross another (the scanner misjudged one of them).
        spans = sorted(groups, key=lambda x: (x[0], -x[1]))
        stack, bad = [], set()
        for s, e in spans:
            while stack and stack[-1][1] <= s:
                stack.pop()
            if stack and e > stack[-1][1]:
                bad.add((s, e))
                continue
            stack.append((s, e))
        for sp in bad:
            starts[sp[0]].remove(sp[1])
            for m in groups.pop(sp):
                self.mutants.remove(m)

        def render(a, b, exclude=None, squash=False):
            out, i = [], a
            while i < b:
                ends = [x for x in starts.get(i, ()) if x <= b and (i, x) != exclude]
                if ends:
                    x = max(ends)
                    out.append(group(i, x, squash))
                    i = x
                else:
                    out.append(self.t[i].text)
                    i += 1
                if i < b:
                    out.append(self.gap(i - 1, squash))
            return ''.join(out)

        def group(s, e, squash):
            ms = groups[(s, e)]
            orig = render(s, e, exclude=(s, e), squash=squash)

            def sub(a, b):
                return render(a, b, exclude=(s, e), squash=True)
            if ms[0].kind == 'remove':
                text = '{ if (!(%s)) { %s } }' % (' || '.join(sel(m.id) for m in ms), orig)
                return text
            text = '(!!(%s))' % orig if ms[0].kind == 'negate' else '(%s)' % orig
            for m in reversed(ms):
                text = '(%s ? (%s) : %s)' % (sel(m.id), m.make(sub), text)
            return text

        head = self.src[:self.t[0].start]
        return head + render(0, len(self.t)) + self.src[self.t[-1].end:]


def identities(path, mutants):
    """file:function:hash, stable across line moves."""
    seen = {}
    for m in mutants:
        key = (m.func, m.kind, m.change, m.tokens)
        n = seen.get(key, 0)
        seen[key] = n + 1
        h = hashlib.sha256(('%s|%s|%s|%s|%d' % (m.func, m.kind, m.change, m.tokens, n)).encode()).hexdigest()
        m.ident = '%s:%s:%s' % (path, m.func, h[:10])


def read_source(repo_path, tree=None, tree_path=None):
    if ':' in repo_path:                    # a file from a patch: read it in the tree
        path = os.path.join(tree, tree_path)
        if os.path.exists(path + '.pristine'):
            path += '.pristine'
        with open(path) as f:
            return f.read()
    with open(os.path.join(ROOT, repo_path)) as f:
        return f.read()


def catalogue(tree=None):
    """[(repo path, tree path, Site)] with ids given in a stable order."""
    out, next_id = [], 1
    for repo_path, tree_path, funcs in SOURCES:
        if ':' in repo_path and tree is None:
            continue
        src = read_source(repo_path, tree, tree_path)
        site = Site(src, funcs)
        site.render_file(lambda n: 'X')         # drops crossing spans
        for m in site.mutants:
            m.tokens = ' '.join(x.text for x in site.t[m.s:m.e])
            m.file = repo_path.split(':')[-1] if ':' in repo_path else repo_path
        identities(repo_path.split(':')[-1], site.mutants)
        site.mutants.sort(key=lambda m: (m.s, -m.e, m.change))
        out.append((repo_path, tree_path, site))
    # Ids by identity order, so a new site elsewhere does not renumber all.
    every = sorted((m for _, _, s in out for m in s.mutants), key=lambda m: m.ident)
    for n, m in enumerate(every, 1):
        m.id = n
        next_id = n + 1
    return out, next_id


def selector(n):
    # The coverage mark is a load and a compare, not a call, but on the
    # first run of a site in each serial line (x86pmu_cov_hit): the mutant
    # build runs the suite's tight windows (step mode folds every
    # instruction) within their guest-time budgets even under load.
    return ('(x86pmu_mutant == %d || (x86pmu_cov_on && x86pmu_cov_map[%d] != x86pmu_cov_epoch'
            ' && x86pmu_cov_hit(%d)))' % (n, n, n))


DECL = ('extern int x86pmu_mutant; extern int x86pmu_cov_on; extern unsigned int x86pmu_cov_map[]; '
        'extern volatile unsigned int x86pmu_cov_epoch; int x86pmu_cov_hit(int n); ')
# Per-test coverage: the epoch is the number of newlines the guest has
# written to a serial port (hw/char/serial.c calls x86pmu_cov_serial, a
# line the instrumented tree adds), so "site n ran while serial line e was
# being written" maps each site to the tests whose output surrounds it
# (harness/mutants.py reads the pairs against the run's serial log).
DEFINE = r'''

/* --- Mutant selection (harness/mutgen.py, emu/qemu/build.sh --mutants) --- */
#include <pthread.h>
#include <string.h>
#include <time.h>
int x86pmu_mutant;
int x86pmu_cov_on;
unsigned int x86pmu_cov_map[%(n)d];
volatile unsigned int x86pmu_cov_epoch;
static const char *x86pmu_cov_path;
static pthread_mutex_t x86pmu_cov_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int *x86pmu_cov_pairs;
static size_t x86pmu_cov_len, x86pmu_cov_cap;

static double *x86pmu_cov_times;
static size_t x86pmu_cov_ntimes;

/* A newline on the serial port: the next epoch, and when it began (the
 * host's seconds since start, for the cost of each test). */
void x86pmu_cov_serial(unsigned char c);
void x86pmu_cov_serial(unsigned char c)
{
    struct timespec ts;
    unsigned int e;

    if (c != '\n' || !x86pmu_cov_on) {
        return;
    }
    e = __atomic_add_fetch(&x86pmu_cov_epoch, 1, __ATOMIC_SEQ_CST);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    pthread_mutex_lock(&x86pmu_cov_lock);
    if (e >= x86pmu_cov_ntimes) {
        size_t n = x86pmu_cov_ntimes ? 2 * x86pmu_cov_ntimes : 4096;
        double *t = realloc(x86pmu_cov_times, n * sizeof(double));

        if (t) {
            memset(t + x86pmu_cov_ntimes, 0, (n - x86pmu_cov_ntimes) * sizeof(double));
            x86pmu_cov_times = t;
            x86pmu_cov_ntimes = n;
        }
    }
    if (e < x86pmu_cov_ntimes) {
        x86pmu_cov_times[e] = ts.tv_sec + ts.tv_nsec * 1e-9;
    }
    pthread_mutex_unlock(&x86pmu_cov_lock);
}

/* Site n ran in this epoch for the first time: one pair (n, epoch). */
int x86pmu_cov_hit(int n)
{
    unsigned int e = x86pmu_cov_epoch;

    pthread_mutex_lock(&x86pmu_cov_lock);
    if (x86pmu_cov_map[n] != e) {
        x86pmu_cov_map[n] = e;
        if (x86pmu_cov_len + 2 > x86pmu_cov_cap) {
            x86pmu_cov_cap = x86pmu_cov_cap ? 2 * x86pmu_cov_cap : 1 << 16;
            x86pmu_cov_pairs = realloc(x86pmu_cov_pairs, x86pmu_cov_cap * sizeof(unsigned int));
        }
        if (x86pmu_cov_pairs) {
            x86pmu_cov_pairs[x86pmu_cov_len++] = n;
            x86pmu_cov_pairs[x86pmu_cov_len++] = e;
        }
    }
    pthread_mutex_unlock(&x86pmu_cov_lock);
    return 0;
}

static void x86pmu_cov_dump(void)
{
    FILE *f = fopen(x86pmu_cov_path, "w");
    size_t i;

    if (!f) {
        return;
    }
    pthread_mutex_lock(&x86pmu_cov_lock);
    fprintf(f, "# epochs %%u\n", x86pmu_cov_epoch);
    for (i = 0; x86pmu_cov_pairs && i + 1 < x86pmu_cov_len; i += 2) {
        fprintf(f, "%%u %%u\n", x86pmu_cov_pairs[i], x86pmu_cov_pairs[i + 1]);
    }
    for (i = 1; i < x86pmu_cov_ntimes && i <= x86pmu_cov_epoch; i++) {
        fprintf(f, "t %%zu %%.3f\n", i, x86pmu_cov_times[i]);
    }
    pthread_mutex_unlock(&x86pmu_cov_lock);
    fclose(f);
}

static void __attribute__((constructor)) x86pmu_mutant_init(void)
{
    const char *id = getenv("X86PMU_MUTANT");

    x86pmu_mutant = id ? atoi(id) : 0;
    x86pmu_cov_path = getenv("X86PMU_COVERAGE");
    memset(x86pmu_cov_map, 0xff, sizeof(x86pmu_cov_map));
    if (x86pmu_cov_path && *x86pmu_cov_path) {
        x86pmu_cov_on = 1;
        atexit(x86pmu_cov_dump);
    }
}
'''

# The serial port's transmit register: each byte the guest writes goes to
# x86pmu_cov_serial (the coverage epochs above).
SERIAL_C = 'hw/char/serial.c'
SERIAL_AT = '            s->thr = (uint8_t) val;\n'
SERIAL_HOOK = '            x86pmu_cov_serial(s->thr);\n'
SERIAL_DECL = 'void x86pmu_cov_serial(unsigned char c); '


HEADER = 'id\tidentity\tfile\tline\tfunction\tkind\tchange\tsite\n'


def write_catalogue(path, cat):
    rows = sorted((m for _, _, s in cat for m in s.mutants), key=lambda m: m.id)
    with open(path, 'w') as f:
        f.write(HEADER)
        for m in rows:
            f.write('%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n' % (m.id, m.ident, m.file, m.line, m.func, m.kind,
                                                        m.change, m.tokens.replace('\t', ' ')[:160]))


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, 'w') as f:
        f.write(text)


def instrument(tree, out):
    cat, n = catalogue(tree)
    for repo_path, tree_path, site in cat:
        text = site.render_file(selector)
        text = DECL + text
        if tree_path == DEFINER:
            text += DEFINE % {'n': n}
        write_if_changed(os.path.join(tree, tree_path), text)
    serial = os.path.join(tree, SERIAL_C)
    with open(serial) as f:
        text = f.read()
    if SERIAL_HOOK not in text:
        if text.count(SERIAL_AT) != 1:
            raise SystemExit('mutgen: %s: no single "%s" to hook the coverage epochs to'
                             % (SERIAL_C, SERIAL_AT.strip()))
        text = SERIAL_DECL + text.replace(SERIAL_AT, SERIAL_AT + SERIAL_HOOK)
        write_if_changed(serial, text)
    write_catalogue(out, cat)
    print('mutgen: %d mutants in %d files' % (n - 1, len(cat)))


def sync(src, dst):
    """Copy the files of tree src that differ into tree dst, so that an
    incremental build recompiles only what changed."""
    import filecmp
    import shutil
    n = 0
    for d, dirs, files in os.walk(src):
        rel = os.path.relpath(d, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            a, b = os.path.join(d, f), os.path.join(dst, rel, f)
            if os.path.islink(a):
                if not os.path.lexists(b):
                    os.symlink(os.readlink(a), b)
                continue
            if os.path.exists(b) and filecmp.cmp(a, b, shallow=False):
                continue
            shutil.copy2(a, b)
            os.utime(b)
            n += 1
    print('mutgen: %d files changed in %s' % (n, dst))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ['instrument'] and len(argv) == 3:
        instrument(argv[1], argv[2])
    elif argv[:1] == ['sync'] and len(argv) == 3:
        sync(argv[1], argv[2])
    elif argv[:1] == ['list']:
        cat, _ = catalogue()
        write_catalogue('/dev/stdout', cat)
    elif argv[:1] == ['render'] and len(argv) == 2:      # one repository file, for a look
        site = Site(read_source(argv[1]))
        n = 1
        for m in site.mutants:
            m.id = n
            n += 1
        sys.stdout.write(DECL + site.render_file(selector))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main())
