"""scripts/train_answer_choice.py's bad input: one clear line, exit 1, before any model is loaded."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from deepresearch.evals.dataset import bundled_dataset

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "train_answer_choice.py"


def load_script():
    """The script as a module, to call its functions directly."""
    spec = importlib.util.spec_from_file_location("train_answer_choice", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_missing_questions_file_is_named(tmp_path):
    done = run("--out", str(tmp_path / "out"), "--questions", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {tmp_path / 'nope.jsonl'} not found (pass --questions/--corpus)"
    assert not (tmp_path / "out").exists()


def test_a_bad_setting_is_named(tmp_path):
    done = run("--out", str(tmp_path / "out"), env={"DEEPRESEARCH_AGENT__ANSWER_POOL": "0"})
    assert done.returncode == 1
    assert done.stderr.strip().startswith("error: bad setting 'agent.answer_pool' (environment variable "
                                          "DEEPRESEARCH_AGENT__ANSWER_POOL)")
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_held_out_must_leave_questions_to_train_on(tmp_path):
    done = run("--out", str(tmp_path / "out"), "--limit", "50", "--held-out", "50")
    assert done.returncode == 1 and done.stderr.strip().startswith("error: need --limit > --held-out")


def test_a_source_with_no_questions_is_named(tmp_path):
    done = run("--out", str(tmp_path / "out"), "--source", "nosuchset", "--held-out", "0", "--limit", "10")
    assert done.returncode == 1
    assert done.stderr.strip() == ("error: 0 free-form train questions with candidates of source nosuchset; "
                                   "need more than --held-out 0")
    assert not (tmp_path / "out").exists()


def test_positives_from_must_reach_below_the_pool(tmp_path):
    done = run("--out", str(tmp_path / "out"), "--positives-from", "5")
    assert done.returncode == 1
    assert done.stderr.strip() == "error: --positives-from must be 0 (off) or more than --candidates (5)"
    assert not (tmp_path / "out").exists()


def test_positives_from_adds_the_gold_below_the_pool_to_training_sets_only():
    script, (questions, corpus) = load_script(), bundled_dataset("demo")
    plain = script.examples(questions, corpus, limit=200, k=5, seed=0)
    held = 40
    grown = script.examples(questions, corpus, limit=200, k=5, seed=0, positives_from=50, plain=held)
    assert grown[:held] == plain[:held]  # held-out sets are measured as the graph ranks them
    added = 0
    for before, after in zip(plain[held:], grown[held:], strict=True):
        if after == before:
            continue
        # A pool that missed the gold, plus one correct span from below it: now learnable.
        assert not before.learnable and after.candidates[:5] == before.candidates
        assert len(after.candidates) == 6 and after.correct == (False,) * 5 + (True,)
        added += 1
    assert added > 0


def test_an_unknown_credit_is_named(tmp_path):
    done = run("--out", str(tmp_path / "out"), "--credit", "half")
    assert done.returncode == 2  # argparse's usage error
    assert "argument --credit: invalid choice: 'half' (choose from" in done.stderr
    assert not (tmp_path / "out").exists()


def test_f1_credit_grades_the_same_pools_and_teaches_from_more_of_them():
    script, (questions, corpus) = load_script(), bundled_dataset("demo")
    exact = script.examples(questions, corpus, limit=200, k=5, seed=0)
    graded = script.examples(questions, corpus, limit=200, k=5, seed=0, credit="f1")
    assert [ex.candidates for ex in graded] == [ex.candidates for ex in exact]
    assert [ex.correct for ex in graded] == [ex.correct for ex in exact]
    assert all(ex.credit is None for ex in exact)
    for ex in graded:  # the gold earns 1, every other candidate its F1 in [0, 1]
        assert all(r == 1.0 for r, ok in zip(ex.rewards, ex.correct, strict=True) if ok)
        assert all(0.0 <= r <= 1.0 for r in ex.rewards)
    assert sum(ex.learnable for ex in graded) > sum(ex.learnable for ex in exact)
