#!/usr/bin/env python3
"""bench: pmutest's performance figures (bench.py KERNEL ISO); build/bench.txt and build/bench.json."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest.bench import main  # noqa: E402
sys.exit(main())
