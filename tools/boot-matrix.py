#!/usr/bin/env python3
"""boot-matrix: every way pmutest boots, each checked; see --help."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest.matrix import main  # noqa: E402
sys.exit(main())
