#!/usr/bin/env python3
"""Add up the result lines of `make test`'s parts: total-results.py FILE[:part,...] ..."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest.results import total  # noqa: E402
sys.exit(total(sys.argv[1:]))
