"""pmutest.bench: the figures as table cells and as the JSON written for
trend tracking (no boots here: make bench does those)."""
import json
import unittest

from pmutest import bench


class Figures(unittest.TestCase):
    def test_series(self):
        fig = bench.Figure('boot', 's', values=[0.5, 0.4, 0.6], wanted=3)
        self.assertEqual(fig.cell(), '0.50 s (0.40-0.60)')
        self.assertEqual(fig.as_json(), {'name': 'boot', 'unit': 's', 'runs': 3, 'wanted_runs': 3,
                                         'values': [0.5, 0.4, 0.6], 'median': 0.5, 'min': 0.4, 'max': 0.6})
        short = bench.Figure('boot', 's', values=[1.0], wanted=3)
        self.assertEqual(short.cell(), '1.00 s (1.00-1.00)  [1 of 3 runs completed]')

    def test_missing_and_single_values(self):
        fig = bench.Figure('PMI cost', 'ns', wanted=5, text='no PMU here')
        self.assertEqual(fig.cell(), 'n/a: no PMU here')
        self.assertEqual(fig.as_json(), {'name': 'PMI cost', 'unit': 'ns', 'runs': 0, 'wanted_runs': 5,
                                         'values': [], 'text': 'no PMU here'})
        size = bench.Figure('ISO size', 'MB', value=4.38)
        self.assertEqual((size.cell(), size.as_json()), ('4.38 MB', {'name': 'ISO size', 'unit': 'MB', 'value': 4.38}))
        text = bench.Figure('bracket', text='5 brackets OK')
        self.assertEqual(text.cell(), '5 brackets OK')

    def test_json_document(self):
        doc = bench.as_json([bench.Figure('a', 's', values=[1.0], wanted=1), bench.Figure('b', text='t')])
        doc = json.loads(json.dumps(doc))
        self.assertEqual(doc['format'], bench.JSON_FORMAT)
        self.assertEqual([f['name'] for f in doc['figures']], ['a', 'b'])
        self.assertRegex(doc['date'], r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$')
        self.assertEqual(doc['runs'], bench.RUNS)
        table = bench.table([bench.Figure('a', 's', values=[1.0], wanted=1)])
        head, _, row = table.splitlines()
        self.assertEqual(row.index('1.00 s (1.00-1.00)'), head.index('value'))


class EmulatedRows(unittest.TestCase):
    def test_handler_length_line(self):
        line = ('    # PMI handler length: 482 instructions per PMI (fixed delivery; 4 PMIs added 1928, '
                '8 added 3856, to a window of 300003)')
        m = bench.HANDLER_LENGTH.match(line.strip())
        self.assertEqual((m.group(1), m.group(2)), ('482', 'fixed'))
        self.assertIsNone(bench.HANDLER_LENGTH.match('# PMI delivery: fixed'))


class CostRows(unittest.TestCase):
    def test_cost_line_of_the_kernel(self):
        # As tests/pmu/pmu_cost.c prints it, indented inside its KTAP block.
        line = '    # cost: cpu0 wrmsr event select, event changes median 1940 min 1852 p90 2024 TSC ticks (n=64, 1.50 x cpuid)'
        m = bench.COST.match(line.strip())
        self.assertEqual(m.groups(), ('wrmsr event select, event changes', '1940', '1852', '2024'))
        self.assertIsNone(bench.COST.match('# cost: cpu1 rdpmc gp median 1 min 1 p90 1 TSC ticks'))
        skip = bench.COST_SKIP.search('ok 1 pmu.cost.table@cpu0-apic0 # SKIP no free GP counter (mask 0)')
        self.assertEqual(skip.group(1), 'no free GP counter (mask 0)')
