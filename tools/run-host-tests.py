#!/usr/bin/env python3
"""Run host unit-test programs, echo them, print "host: N passed, M failed, K skipped"."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest.results import run_programs  # noqa: E402
sys.exit(run_programs(sys.argv[1:]))
