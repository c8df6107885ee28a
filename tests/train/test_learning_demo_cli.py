"""The learning demo script's bad input: one clear line, exit 1, before any model is loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "learning_demo.py"
POOL = Path("/work/shared/data/pool")


def demo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not POOL.is_dir(), reason="needs the shared pool data")
def test_unknown_question_type_names_the_known_ones(tmp_path):
    done = demo("--out", str(tmp_path / "demo"), "--types", "no-such-type")
    assert done.returncode == 1
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: no pool train/dev questions of types ['no-such-type']") and "comparison" in line


@pytest.mark.skipif(not POOL.is_dir(), reason="needs the shared pool data")
def test_recheck_needs_a_finished_demo(tmp_path):
    done = demo("--out", str(tmp_path / "nothing-here"), "--recheck", "2", "3")
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: --recheck needs a finished demo in {tmp_path / 'nothing-here'} " \
                                  "(no summary.json there)"


def test_unknown_role_is_an_argparse_error(tmp_path):
    done = demo("--out", str(tmp_path / "demo"), "--train-roles", "pilot")
    assert done.returncode == 2 and "invalid choice: 'pilot'" in done.stderr
