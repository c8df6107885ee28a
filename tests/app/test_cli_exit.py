"""How the console script ends: without noise from the libraries it loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import clean_env

# The CLI as installed, after something imported triton (transformers' model classes do: the first run's GGUF
# conversion, an adapter being served).
AFTER_TRITON = ("import sys, triton; from deepresearch.app.cli import main; "
                "sys.argv = ['deepresearch', '--version']; main()")


def test_a_command_after_triton_was_imported_exits_without_leak_warnings(tmp_path: Path):
    pytest.importorskip("triton")
    proc = subprocess.run([sys.executable, "-c", AFTER_TRITON], capture_output=True, text=True, timeout=120,
                          env=clean_env(tmp_path), stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr, proc.stderr[:500]
