"""pmutest.check_rule_map on small trees: a complete map passes; a check
that is no KTEST, a model function in no row, a reference to no function
and a repeated id each fail."""
import io
import os
import shutil
import tempfile
import unittest

from pmutest import check_rule_map as crm

HEADER = 'id\tshape\tmodel\tmanual\trule\tchecks\n'
MODEL = ('/* a model file */\nint x86pmu_count(int n)\n{\n\treturn n + 1;\n}\n\n'
         'static int x86pmu_helper(void)\n{\n\treturn 0;\n}\n')
TESTS = 'KTEST("pmu.count", basic, "counts") { }\n'


class RuleMap(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.put('emu/model/x86-pmu-count.c', MODEL)
        self.put('tests/pmu/pmu_count.c', TESTS)

    def tearDown(self):
        shutil.rmtree(self.root)

    def put(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)

    def run_map(self, rows):
        self.put('docs/rule-map.tsv', '# comment\n' + HEADER + ''.join(r + '\n' for r in rows))
        out = io.StringIO()
        rc = crm.check(self.root, out)
        return rc, out.getvalue().splitlines()

    def test_a_complete_map_passes(self):
        rc, lines = self.run_map(['R1\tall\tcount:x86pmu_count\tSDM\tcounts\tpmu.count.basic',
                                  'R2\tall\tcount:x86pmu_helper\tSDM\thelps\tnot checkable: no guest can see it'])
        self.assertEqual(rc, 0, lines)
        self.assertEqual(lines[-1], 'rule-map: 2 passed, 0 failed, 0 skipped')

    def test_each_problem_fails(self):
        rc, lines = self.run_map(['R1\tall\tcount:x86pmu_count\tSDM\tcounts\tpmu.count.nothing',
                                  'R1\tall\tcount:x86pmu_gone\tSDM\tgone\tgap: not written yet'])
        self.assertEqual(rc, 1)
        for want in ('pmu.count.nothing is not a KTEST of tests/', 'id R1 twice',
                     'count:x86pmu_gone is not a function of emu/model/x86-pmu-count.c',
                     'emu/model/x86-pmu-count.c: function x86pmu_helper is in no row'):
            self.assertTrue(any(want in line for line in lines), '%s not in %s' % (want, lines))
        self.assertEqual(lines[-1], 'rule-map: 0 passed, 4 failed, 1 skipped')


if __name__ == '__main__':
    unittest.main()
