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


def test_negative_em_every_is_refused(tmp_path):
    done = demo("--out", str(tmp_path / "demo"), "--em-every", "-1")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "error: --em-every must be 0 or more rounds (got -1)"


@pytest.mark.skipif(not POOL.is_dir(), reason="needs the shared pool data")
def test_unknown_train_source_names_the_known_ones(tmp_path):
    done = demo("--out", str(tmp_path / "demo"), "--types", "all", "--train-sources", "wikihop")
    assert done.returncode == 1
    line = done.stderr.strip().splitlines()[-1]
    assert "(train sources ['wikihop'])" in line and line.endswith("the sources: hotpotqa, musique")


@pytest.mark.skipif(not POOL.is_dir(), reason="needs the shared pool data")
def test_train_sources_keep_the_other_sources_out_of_training_only(tmp_path):
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("learning_demo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    qfile, _ = module.build_world(tmp_path, 40, 60, 0, None, ["hotpotqa"])
    rows = [json.loads(line) for line in qfile.open()]
    sources = {split: {r["source"] for r in rows if r["split"] == split} for split in ("train", "dev")}
    assert sources == {"train": {"hotpotqa"}, "dev": {"hotpotqa", "musique"}}


def test_the_plot_draws_dev_em_per_checkpoint_and_a_one_seed_verdict(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("learning_demo", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    def dev(reward: float) -> dict:
        return {"mean": reward, "low": reward, "high": reward, "per_seed": [reward]}

    summary = {"settings": {"num_iterations": 2}, "dev_before": dev(1.0), "dev_after": dev(1.1),
               "rise": 0.1, "noise": 0.0, "rose_beyond_noise": None, "final_adapter": "grpo-0002",
               "train": [{"round": r, "reward_mean": 1.0, "reward_std": 0.1, "terms": None} for r in (1, 2)],
               "checkpoints": [{"round": r, "em": 0.2, "correct": 2, "questions": 10} for r in (0, 2)]}
    module.plot(summary, tmp_path / "learning.png")
    assert (tmp_path / "learning.png").stat().st_size > 10_000
    assert module.rise(summary).endswith("one eval seed: no noise band")
