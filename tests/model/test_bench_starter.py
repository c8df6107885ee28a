"""bench/starter.py: refuses bad input in one line; one real sample of each way prints its rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "starter.py"


def test_zero_runs_is_refused():
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", "0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == "error: --runs must be at least 1"


def test_one_run_of_each_way_prints_its_rows(tmp_path):
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "no-config")}
    done = subprocess.run([sys.executable, str(SCRIPT), "--runs", "1"], capture_output=True, text=True, timeout=900,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == ["through peft", "from its files", "base model",
                                                           "starter adapter"]
    assert rows[0].split("│")[-2].strip() == "1.0" and rows[2].split("│")[-3].strip() == "1.00"  # baselines
