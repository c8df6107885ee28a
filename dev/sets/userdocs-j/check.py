#!/usr/bin/env python3
"""Validator for userdocs-j: runs the shared ../check_set.py on this folder, with this set's check.json.

Usage: python3 check.py (from anywhere)    exit 0 = pass, 1 = problems found, 2 = cannot run.
"""

import runpy
import sys
from pathlib import Path

sys.argv[1:1] = [str(Path(__file__).resolve().parent)]
runpy.run_path(str(Path(__file__).resolve().parent.parent / "check_set.py"), run_name="__main__")
