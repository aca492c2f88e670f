"""Harnesses that judge pmutest and its emulated PMU from outside.

Each module is one harness, run as ``python3 -m harness.<name>`` (the Makefile
has a target for each); harness/README.md lists them.
"""
