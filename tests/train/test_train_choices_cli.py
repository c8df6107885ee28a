"""`deepresearch train choices` (train/choice/trainer.py): bad input is one clear line, exit 2, before any model
is loaded; the candidate sets it trains on."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from deepresearch.evals.data.dataset import bundled_dataset
from deepresearch.train.choice.trainer import ChoiceQuestions, answer_sets

from ..app.helpers import clean_env, cli, one_error_line


def run(tmp_path: Path, *args: str, **env: str):
    return cli("train", "choices", "--out", str(tmp_path / "out"), *args, env=clean_env(tmp_path, **env),
               timeout=120)


def sets(**spec) -> ChoiceQuestions:
    questions, corpus = bundled_dataset("demo")
    return ChoiceQuestions(questions=questions, corpus=corpus, **{"limit": 200, "candidates": 5, **spec})


def test_a_missing_questions_file_is_named(tmp_path):
    done = run(tmp_path, "--questions", str(tmp_path / "nope.jsonl"))
    assert done.returncode == 2
    assert one_error_line(done) == f"error: {tmp_path / 'nope.jsonl'} not found (pass --questions/--corpus)"
    assert not (tmp_path / "out").exists()


def test_a_bad_setting_is_named(tmp_path):
    done = run(tmp_path, DEEPRESEARCH_AGENT__ANSWER_POOL="0")
    assert done.returncode == 2
    assert one_error_line(done).startswith("error: bad setting 'agent.answer_pool' (environment variable "
                                           "DEEPRESEARCH_AGENT__ANSWER_POOL)")
    assert not (tmp_path / "out").exists()


def test_held_out_must_leave_questions_to_train_on(tmp_path):
    done = run(tmp_path, "--limit", "50", "--held-out", "50")
    assert done.returncode == 2 and one_error_line(done).startswith("error: need --limit > --held-out")


def test_a_source_with_no_questions_is_named(tmp_path):
    done = run(tmp_path, "--source", "nosuchset", "--held-out", "0", "--limit", "10")
    assert done.returncode == 2
    assert one_error_line(done) == ("error: 0 free-form train questions with candidates of source nosuchset; "
                                    "need more than --held-out 0")
    assert not (tmp_path / "out").exists()


def test_positives_from_must_reach_below_the_pool(tmp_path):
    done = run(tmp_path, "--positives-from", "5")
    assert done.returncode == 2
    assert one_error_line(done) == "error: --positives-from must be 0 (off) or more than --candidates (5)"
    assert not (tmp_path / "out").exists()


def test_an_unknown_credit_is_named(tmp_path):
    done = run(tmp_path, "--credit", "half")
    assert done.returncode == 2
    assert one_error_line(done) == "error: --credit must be exact or f1 (got 'half')"
    assert not (tmp_path / "out").exists()


def test_measure_names_what_is_not_an_adapter(tmp_path):
    done = cli("adapters", "measure", str(tmp_path), env=clean_env(tmp_path), timeout=120)
    assert done.returncode == 2
    assert one_error_line(done) == f"error: {tmp_path}: not an adapter folder (no adapter_config.json)"


def test_positives_from_adds_the_gold_below_the_pool_to_training_sets_only():
    held = 40
    plain = answer_sets(sets(held_out=held))
    grown = answer_sets(sets(held_out=held, positives_from=50))
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


def test_f1_credit_grades_the_same_pools_and_teaches_from_more_of_them():
    exact = answer_sets(sets())
    graded = answer_sets(sets(), credit="f1")
    assert [ex.candidates for ex in graded] == [ex.candidates for ex in exact]
    assert [ex.correct for ex in graded] == [ex.correct for ex in exact]
    assert all(ex.credit is None for ex in exact)
    assert [dataclasses.replace(ex, credit=None) for ex in graded] == exact
    for ex in graded:  # the gold earns 1, every other candidate its F1 in [0, 1]
        assert all(r == 1.0 for r, ok in zip(ex.rewards, ex.correct, strict=True) if ok)
        assert all(0.0 <= r <= 1.0 for r in ex.rewards)
    assert sum(ex.learnable for ex in graded) > sum(ex.learnable for ex in exact)


def test_the_sets_rank_candidates_as_the_graphs_writer_does(monkeypatch):
    from deepresearch.agent.reader.trust import ranking

    ranked = answer_sets(sets(limit=60))
    for ex in ranked:  # features + the relevance term, best first: the order the policy is shown them in
        scores = [score for _, _, score in ex.candidates]
        assert scores == sorted(scores, reverse=True)
    monkeypatch.setattr(ranking, "ABOUT_WEIGHT", 0.0)
    plain = answer_sets(sets(limit=60))
    assert [ex.question for ex in plain] == [ex.question for ex in ranked]
    assert any(a.candidates != b.candidates for a, b in zip(plain, ranked, strict=True))
