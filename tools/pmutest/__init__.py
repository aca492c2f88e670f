"""pmutest's host-side tools as one package: what the scripts beside it
share (KTAP parsing, expect files, the QEMU command line, JUnit, result
lines). Each CLI in tools/ is a thin wrapper around one module here; the
tests in tools/tests/ import the modules directly."""
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
