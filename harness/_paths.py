"""Put tools/ on sys.path, so that a harness can use the runner's modules
(``from pmutest import ktap, expect``) the way tools/pmutest-run does."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)
