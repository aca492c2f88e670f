#!/usr/bin/env python3
"""The project's Python tests (tools/tests/, ci-examples/): run-tests.py [PATH...] [-k TEXT]."""
import argparse, os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest import testing  # noqa: E402
ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument('paths', nargs='*', help='test directories or files (default: all)')
ap.add_argument('-k', dest='only', help='only tests whose id contains this text')
a = ap.parse_args()
sys.exit(testing.run(a.paths or testing.TEST_DIRS, only=a.only))
