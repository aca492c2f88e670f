#!/usr/bin/env python3
"""emu-matrix: pmutest on every emulated-PMU profile, each checked; see --help."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest.emumatrix import main  # noqa: E402
sys.exit(main())
