"""bench/model.py's bad input: one clear line, a non-zero exit, before any model is loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "model.py"


def test_an_adapter_that_is_not_a_lora_directory_is_refused(tmp_path):
    done = subprocess.run([sys.executable, str(SCRIPT), "--workload", "agent", "--adapter", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == f"bench/model.py: {tmp_path} is not a LoRA adapter directory (no adapter_config.json)"


def test_an_unknown_engine_is_refused():
    done = subprocess.run([sys.executable, str(SCRIPT), "--workload", "agent", "--engines", "turbo"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "unknown engine 'turbo'" in done.stderr.strip().splitlines()[-1]


def test_an_unknown_prefix_cache_mode_is_refused():
    done = subprocess.run([sys.executable, str(SCRIPT), "--workload", "agent", "--prefix-cache", "on,all"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == "bench/model.py: --prefix-cache takes on, system or off, not 'all'"
