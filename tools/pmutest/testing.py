"""The one runner for the project's Python tests (tools/tests/ and
ci-examples/): unittest discovery, verbose output, a sub-total line per
test module and the project's result line last."""
import collections
import os
import sys
import unittest

from . import REPO_ROOT
from .results import format_line

TEST_DIRS = (os.path.join(REPO_ROOT, 'tools', 'tests'), os.path.join(REPO_ROOT, 'ci-examples'))


class _Tally(unittest.TextTestResult):
    """A text result that also remembers each test's outcome by module."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.by_module = collections.defaultdict(lambda: [0, 0, 0])

    def _mark(self, test, column):
        module = type(test).__module__
        if module in ('unittest.suite', 'unittest.loader'):     # setUpModule / import errors
            module = str(test).split('(')[-1].rstrip(')').strip()
        self.by_module[module.split('.')[-1]][column] += 1

    def addSuccess(self, test):
        super().addSuccess(test)
        self._mark(test, 0)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._mark(test, 0)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._mark(test, 1)

    def addError(self, test, err):
        super().addError(test, err)
        self._mark(test, 1)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._mark(test, 1)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._mark(test, 2)


def discover(paths, pattern='test*.py'):
    """A suite of the test modules in these directories or files."""
    loader, suite = unittest.TestLoader(), unittest.TestSuite()
    for path in paths:
        path = os.path.abspath(path)
        if os.path.isdir(path):
            suite.addTests(loader.discover(path, pattern=pattern, top_level_dir=path))
        else:
            suite.addTests(loader.discover(os.path.dirname(path), pattern=os.path.basename(path),
                                           top_level_dir=os.path.dirname(path)))
    return suite


def run(paths=TEST_DIRS, part='tools', out=sys.stdout, only=None):
    """Run the tests; print sub-totals per module and the result line last.
    only: keep tests whose id contains this text."""
    sys.dont_write_bytecode = True
    suite = discover(paths)
    if only:
        suite = unittest.TestSuite(t for t in _flatten(suite) if only in t.id())
    runner = unittest.TextTestRunner(stream=out, verbosity=2, resultclass=_Tally)
    result = runner.run(suite)
    for module in sorted(result.by_module):
        print(format_line('%s.%s' % (part, module), *result.by_module[module], subtotal=True), file=out)
    totals = [sum(c[i] for c in result.by_module.values()) for i in range(3)]
    print(format_line(part, *totals), file=out)
    return 1 if totals[1] else 0


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


def main(argv=None):
    """python3 -m pmutest.testing [PATH...] [-k TEXT]: the project's Python
    tests (tools/tests/, ci-examples/)."""
    import argparse
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument('paths', nargs='*', help='test directories or files (default: all)')
    ap.add_argument('-k', dest='only', help='only tests whose id contains this text')
    a = ap.parse_args(argv)
    return run(a.paths or TEST_DIRS, only=a.only)


if __name__ == '__main__':
    sys.exit(main())
