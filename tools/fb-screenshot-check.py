#!/usr/bin/env python3
"""fb-screenshot-check: does a framebuffer screendump show the serial log's last lines? See --help."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pmutest.fbcheck import main  # noqa: E402
sys.exit(main())
