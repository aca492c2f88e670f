"""pmutest.check_layers: the checks that have no kernel objects to read,
on small trees: emu/model include circles, import circles across
tools/pmutest and harness/, docs/HACKING.md's drawing of LAYERS, and the
kernel sources the Makefile does not build; and the vendor-neutral core
on objects compiled here (skipped without gcc)."""
import os
import shutil
import subprocess
import tempfile
import unittest

from pmutest import check_layers as cl

DRAWING = ('# Hacking\n\n```\n boot/   tests/\n   |\n modes/\n   |\n pmu/kernel/\n   |\n'
           ' pmu/intel/  pmu/amd/\n   |\n pmu/\n   |\n arch/x86/  arch/x86/pc/\n   |\n lib/\n```\n')


class Tree(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.root)

    def put(self, path, text=''):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)


class ModelIncludes(Tree):
    def test_a_circle_is_found_with_its_lines(self):
        self.put('emu/model/a.h', '#include "b.h"\n')
        self.put('emu/model/b.h', '#include "x86-pmu.h"\n')
        self.put('emu/model/x86-pmu.h', '\n#include "a.h"\n')
        self.put('emu/model/a.c', '#include "a.h"\n')
        files = ['emu/model/a.c', 'emu/model/a.h', 'emu/model/b.h', 'emu/model/x86-pmu.h']
        edges, why = cl.model_includes(self.root, files)
        self.assertEqual(cl.circles(edges), [['emu/model/a', 'emu/model/b', 'emu/model/x86-pmu']])
        self.assertEqual(why[('emu/model/x86-pmu', 'emu/model/a')], 'emu/model/x86-pmu.h:2')

    def test_a_downward_chain_is_no_circle(self):
        self.put('emu/model/a.c', '#include "b.h"\n')
        self.put('emu/model/b.h', '#include "c.h"\n')
        self.put('emu/model/c.h', '')
        edges, _ = cl.model_includes(self.root, ['emu/model/a.c', 'emu/model/b.h', 'emu/model/c.h'])
        self.assertEqual(cl.circles(edges), [])
        self.assertEqual(sum(len(v) for v in edges.values()), 2)


class Imports(Tree):
    def test_a_circle_across_tools_and_harness(self):
        self.put('tools/pmutest/qemu.py', 'from harness import kexec\n')
        self.put('harness/kexec.py', 'from harness import _paths\nfrom pmutest.qemu import run_qemu\n')
        self.put('harness/_paths.py', 'import os\n')
        edges, _ = cl.python_imports(self.root)
        self.assertEqual(cl.circles(edges), [['harness/kexec', 'tools/pmutest/qemu']])

    def test_harness_over_tools_is_no_circle(self):
        self.put('tools/pmutest/qemu.py', 'import os\n')
        self.put('tools/pmutest/ktap.py', 'from . import qemu\n')
        self.put('harness/kexec.py', 'from harness import debian\nfrom pmutest import ktap\n')
        self.put('harness/debian.py', 'import os\n')
        edges, _ = cl.python_imports(self.root)
        self.assertEqual(cl.circles(edges), [])
        self.assertEqual(edges['harness/kexec'], {'harness/debian', 'tools/pmutest/ktap'})
        self.assertEqual(edges['tools/pmutest/ktap'], {'tools/pmutest/qemu'})


class Drawing(Tree):
    def test_the_drawing_of_layers_passes(self):
        self.put('docs/HACKING.md', DRAWING)
        self.assertEqual(cl.drawing_order(self.root), [])

    def test_a_layer_out_of_order_fails(self):
        self.put('docs/HACKING.md', DRAWING.replace(' modes/\n', ' lib2/\n').replace(' lib/\n', ' modes/\n')
                 .replace(' lib2/\n', ' lib/\n'))
        self.assertEqual(cl.drawing_order(self.root),
                         ['docs/HACKING.md: the drawing puts pmu/kernel/ below lib/, which LAYERS puts under it'])

    def test_a_missing_layer_fails(self):
        self.put('docs/HACKING.md', DRAWING.replace(' modes/\n   |\n', ''))
        self.assertEqual(cl.drawing_order(self.root), ['docs/HACKING.md: the drawing does not show the layer modes/'])

    def test_a_folder_in_no_layer_fails(self):
        self.put('docs/HACKING.md', DRAWING.replace(' lib/\n', ' lib/  extra/\n'))
        self.assertEqual(cl.drawing_order(self.root),
                         ['docs/HACKING.md: the drawing names extra/, in no layer of LAYERS'])


class Unbuilt(Tree):
    def test_a_source_without_its_object(self):
        self.put('build/k/pmu/event.c.o')
        self.put('build/k/boot/entry.S.o')
        files = ['pmu/event.c', 'pmu/pmu.h', 'pmu/amd/core.c', 'boot/entry.S', 'tests/host/test_x.c', 'emu/model/a.c']
        self.assertEqual(cl.unbuilt_sources(files, os.path.join(self.root, 'build/k')),
                         ['pmu/amd/core.c: a source of layer pmu/amd/ that the Makefile does not build '
                          '(add its folder to KERNEL_DIRS)'])


@unittest.skipUnless(shutil.which('gcc') and shutil.which('readelf'), 'needs gcc and readelf')
class VendorNeutralCore(Tree):
    """The core's objects name no vendor: symbols, debug names, strings."""

    def build(self, path, text):
        self.put(path, text)
        obj = os.path.join(self.root, 'build/k', path + '.o')
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run(['gcc', '-std=c11', '-g', '-O1', '-c', os.path.join(self.root, path), '-o', obj],
                       check=True)

    def check(self):
        kdir = os.path.join(self.root, 'build/k')
        table = cl.symbols(kdir, self.root)
        return cl.vendor_names(kdir, table)[1]

    def test_a_neutral_core_passes(self):
        self.build('pmu/intel/core.c', 'int intel_decode(int x) { return x + 1; }\n')
        self.build('pmu/event.c', 'enum pmu_vendor { PMU_VENDOR_UNKNOWN, PMU_VENDOR_INTEL };\n'
                   'struct caps { unsigned long long vendor_caps[2]; enum pmu_vendor v; };\n'
                   'const char *pmu_ctr_name(struct caps *c) { return c->v ? "PMC" : "?"; }\n')
        self.assertEqual(self.check(), [])

    def test_a_call_into_a_backend_fails(self):
        self.build('pmu/intel/core.c', 'int backend_decode(int x) { return x + 1; }\n')
        self.build('pmu/event.c', 'int backend_decode(int x);\nint pmu_go(int x) { return backend_decode(x); }\n')
        self.assertEqual(self.check(), ['pmu/event.c refers to backend_decode, which the vendor backend '
                                        'pmu/intel/core.c defines: the core reaches a backend only through its '
                                        'pmu_ops'])

    def test_vendor_names_and_strings_fail(self):
        self.build('pmu/caps.c', 'struct caps { int amd_ext_core; unsigned pebs_format; };\n'
                   'int pmu_caps_pebs(struct caps *c) { return c->amd_ext_core + (int)c->pebs_format; }\n'
                   'const char *pmu_fixed_name(void) { return "IA32_FIXED_CTR"; }\n')
        found = self.check()
        for want in ('pmu/caps.c names amd_ext_core (member)', 'pmu/caps.c names pebs_format (member)',
                     'pmu/caps.c names pmu_caps_pebs (',
                     'pmu/caps.c holds the string "IA32_FIXED_CTR" (IA32_FIXED_CTR)'):
            self.assertTrue(any(f.startswith(want) for f in found), '%s not in %s' % (want, found))
        self.assertEqual(len(found), 4, found)

    def test_a_register_of_one_vendor_fails(self):
        self.build('pmu/attr.c', 'struct attr { unsigned long long offcore_rsp, extra_config; };\n'
                   'struct caps { unsigned leaf23_valid; unsigned long long perf_caps; unsigned fixed_ctrl; };\n'
                   'unsigned long long pmu_get(struct attr *a, struct caps *c)\n'
                   '{ return a->offcore_rsp + a->extra_config + c->leaf23_valid + c->perf_caps + c->fixed_ctrl; }\n')
        found = self.check()
        for want in ('pmu/attr.c names offcore_rsp (member): a register of one vendor',
                     'pmu/attr.c names leaf23_valid (member): a register of one vendor',
                     'pmu/attr.c names perf_caps (member): a register of one vendor'):
            self.assertTrue(any(f.startswith(want) for f in found), '%s not in %s' % (want, found))
        self.assertEqual(len(found), 3, found)

    def test_an_event_select_field_of_one_vendor_fails(self):
        # The core's attr before its own_config: Intel's AnyThread and AMD's
        # HostOnly/GuestOnly as fields; a local named any is no field.
        self.build('pmu/attr.c', 'struct attr { _Bool usr, any; _Bool host_only, guest_only; '
                   'unsigned long long own_config; };\n'
                   'struct caps { unsigned anythread_deprecated; };\n'
                   'int pmu_get(struct attr *a, struct caps *c)\n'
                   '{ int any = a->usr; return any + a->any + a->host_only + a->guest_only + (int)a->own_config'
                   ' + (int)c->anythread_deprecated; }\n')
        found = self.check()
        for want in ('pmu/attr.c names any (member): an event-select field of one vendor',
                     'pmu/attr.c names host_only (member): an event-select field of one vendor',
                     'pmu/attr.c names guest_only (member): an event-select field of one vendor',
                     'pmu/attr.c names anythread_deprecated (member): an event-select field of one vendor'):
            self.assertTrue(any(f.startswith(want) for f in found), '%s not in %s' % (want, found))
        self.assertEqual(len(found), 4, found)

    def test_a_subfolder_is_no_core(self):
        self.build('pmu/kernel/hw.c', 'const char *name(void) { return "IA32_PMC"; }\n')
        self.assertEqual(self.check(), [])


if __name__ == '__main__':
    unittest.main()
