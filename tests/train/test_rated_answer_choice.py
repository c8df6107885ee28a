"""What people rated teaches the answer choice: `train --from-runs` replays a question whose answer its user
rated well, and the replays' candidate sets holding that answer train the re-ranker's choice loss, as a
pool question's gold does. A poorly rated answer says which candidate is wrong, not which is right: no set.
"""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.agent.graph.events import AnswerScored, read_events
from deepresearch.agent.trace.store import TraceStore
from deepresearch.train.adapters.registry import AdapterRegistry
from deepresearch.train.rounds.questions import TRAIN_TAG, TrainQuestion

from ..app.helpers import clean_env, cli

RATED_WELL = "In what year did the playwright who wrote The City Heiress die?"
RATED_BADLY = "Who wrote The City Heiress?"


def test_the_choice_learns_the_gold_else_a_well_rated_answer():
    gold = TrainQuestion(id="g", question="q", answer="1689", answer_aliases=["AD 1689"],
                         reference_answer="1640", reference_feedback=1.0)
    assert gold.choice_golds == ["1689", "AD 1689"]  # a gold outranks any rating
    rated = TrainQuestion(id="r", question="q", reference_answer="1689", reference_feedback=0.5)
    assert rated.choice_golds == ["1689"]
    for score in (0.0, -1.0, None):
        assert TrainQuestion(id="b", question="q", reference_answer="1689", reference_feedback=score).choice_golds == []
    assert TrainQuestion(id="n", question="q").choice_golds == []


def test_a_well_rated_answer_trains_the_choice_from_its_replays(tmp_path: Path):
    # the replays alone: no questions synthesized from what the runs read (tests/train/test_synth_runs.py); every
    # run answers (a held-back "not found" would leave the badly rated run no answer to rate)
    env = clean_env(tmp_path, DEEPRESEARCH_TRAIN__SYNTH__FROM_RUNS="false",
                    DEEPRESEARCH_AGENT__MIN_ANSWER_CONFIDENCE="0")
    answers = {}
    for question, score in ((RATED_WELL, "1"), (RATED_BADLY, "-1")):
        asked = cli("ask", "--offline", "--auto-approve", "--quiet", "--json", question, env=env)
        assert asked.returncode == 0, asked.stderr[-3000:]
        result = json.loads(asked.stdout)
        answers[question] = result["answer"]
        rated = cli("runs", "feedback", result["run_id"], "--score", score, env=env)
        assert rated.returncode == 0, rated.stderr[-3000:]

    trained = cli("train", "--from-runs", "--train-roles", "answer", "--no-gate", "--group-size", "2",
                  "--questions-per-round", "2", "--rounds", "1", env=env, timeout=600)
    assert trained.returncode == 0, trained.stderr[-3000:]
    # Greedy replays of a question gather the same evidence: the well-rated one's set once, the other's none.
    assert "round 1: 4 runs" in trained.stderr and "answer choice: 1 candidate sets" in trained.stderr
    meta = AdapterRegistry(tmp_path / "data" / "adapters").metadata("grpo-0001")
    assert meta["roles"] == ["answer"] and meta["data"]["choice_examples"] == 1
    # The badly rated answer was among its replays' candidates (only the rating kept that set out), or the run held
    # its best guess back as not about the question ("not found": nothing a rating could teach).
    store = TraceStore(tmp_path / "data" / "traces.db")
    try:
        replays = [r.id for r in store.list_runs(limit=None) if TRAIN_TAG in r.tags and r.question == RATED_BADLY]
        offered = {c.text for rid in replays for e in read_events(store, rid, AnswerScored) for c in e.candidates}
    finally:
        store.close()
    assert len(replays) == 2 and offered and (answers[RATED_BADLY] in offered or answers[RATED_BADLY] == "not found")
