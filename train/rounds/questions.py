"""Where training questions come from: a QA file, or questions people asked (logged runs).

A QA file has gold answers (and often gold documents). A logged question usually has neither; what
it may have is the user's feedback on the answer they got, which becomes a reference for the group:
replays agreeing with a well-rated answer (or disagreeing with a badly rated one) score higher.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore

TRAIN_TAG = "train_round"  # rollouts carry it; they are never replayed as "logged questions"
EVAL_TAG = "eval_id"  # eval runs carry it (evals' recorder); not user questions either


class SearchSource(BaseModel):
    """Where a logged run searched, read from its settings snapshot: what its replays search too."""

    offline: bool = False  # `ask --offline`: the local index only
    index: str | None = None  # the local index its local backend searched
    backends: list[str] = Field(default_factory=list)  # the fallback chain, in order
    searxng_url: str | None = None

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> SearchSource | None:
        """None when the snapshot does not record the search settings (older runs, runs built by hand)."""
        search = (snapshot.get("tools") or {}).get("search")
        if not isinstance(search, dict):
            return None
        run = snapshot.get("run") or {}
        needs = {"searxng": "searxng_url", "tavily": "tavily_api_key", "brave": "brave_api_key"}
        used = [b for b in search.get("backends") or [] if b not in needs or search.get(needs[b])]  # configured
        return cls(offline=bool(run.get("offline", False)), index=run.get("index") or snapshot.get("index"),
                   backends=used, searxng_url=search.get("searxng_url"))

    def describe(self) -> str:
        if self.offline:
            return f"the local index {self.index or '(default)'} only (the runs were offline)"
        names = {"searxng": f"searxng ({self.searxng_url})", "local": f"local ({self.index or 'default index'})"}
        return " → ".join(names.get(b, b) for b in self.backends) or "no backend"


class TrainQuestion(BaseModel):
    id: str
    question: str
    answer: str | None = None  # gold, when known
    answer_aliases: list[str] = Field(default_factory=list)
    gold_doc_ids: list[str] = Field(default_factory=list)
    yes_no: bool = False
    # From logged runs: the answer a user rated and their mean score (−1 … 1).
    source_run_ids: list[str] = Field(default_factory=list)
    reference_answer: str | None = None
    reference_feedback: float | None = None
    search: SearchSource | None = None  # where the newest of those runs searched
    # Synthesized from documents (train/synth/): one_hop, two_hop, comparison or unanswerable (gold "not found").
    kind: str | None = None

    @property
    def golds(self) -> list[str]:
        return [self.answer, *self.answer_aliases] if self.answer else []

    @property
    def choice_golds(self) -> list[str]:
        """The answers the re-ranker's choice learns to pick: the gold, else a logged run's answer that its
        user rated well (mean score > 0). A poorly rated answer says which candidate is wrong, not which is
        right, so it gives the choice loss nothing."""
        if self.golds:
            return self.golds
        if self.reference_answer and (self.reference_feedback or 0.0) > 0.0:
            return [self.reference_answer]
        return []


def questions_from_file(path: Path, split: str | None = None) -> list[TrainQuestion]:
    """QA jsonl (id, question, answer, answer_aliases, gold_doc_ids, split …); raises the evals
    loader's DatasetError (`file:line: what is wrong`) on bad input."""
    from deepresearch.evals.data.dataset import load_questions

    items = load_questions(path)
    if split is not None:
        items = [q for q in items if q.split == split]
    return [
        TrainQuestion(id=q.id, question=q.question, answer=q.answer, answer_aliases=q.answer_aliases,
                      gold_doc_ids=q.gold_doc_ids, yes_no=q.is_yes_no)
        for q in items
    ]


def questions_from_runs(
    store: TraceStore, since: datetime | None = None, limit: int | None = None
) -> list[TrainQuestion]:
    """Distinct questions people asked (not training rollouts, not eval runs), newest first. A run
    with feedback lends its answer and mean score as the group's reference."""
    by_text: dict[str, TrainQuestion] = {}
    for run in store.list_runs(limit=None, since=since):
        if TRAIN_TAG in run.tags or EVAL_TAG in run.tags or not run.question.strip():
            continue
        key = " ".join(run.question.split()).lower()
        item = by_text.setdefault(key, TrainQuestion(id=f"run-{run.id}", question=run.question.strip(),
                                                     search=SearchSource.from_snapshot(run.settings)))
        item.source_run_ids.append(run.id)
        scores = [float(f["score"]) for f in run.feedback]
        if scores and item.reference_feedback is None and run.answer:
            item.reference_answer, item.reference_feedback = run.answer, mean(scores)
    items = list(by_text.values())
    return items[:limit] if limit is not None else items


def watch_round(store: Any, since: datetime, min_new_runs: int) -> list[TrainQuestion] | None:
    """The questions `train --watch` trains its next round on, or None to keep waiting: enough new
    logged questions since `since`, or any feedback since then (feedback may arrive on older runs:
    their questions count as new too)."""
    fresh = questions_from_runs(store, since=since)
    rated_runs = {run_id for run_id, _score, _comment in store.feedback_since(since)}
    if rated_runs:
        seen = {q.question for q in fresh}
        fresh += [q for q in questions_from_runs(store) if set(q.source_run_ids) & rated_runs
                  and q.question not in seen]
    return fresh if len(fresh) >= min_new_runs or rated_runs else None


def round_questions(items: list[TrainQuestion], round_index: int, per_round: int, seed: int = 0) -> list[TrainQuestion]:
    """Round k's questions: consecutive slices of one seeded shuffle, wrapping around (epochs)."""
    import random

    if not items:
        return []
    order = list(items)
    random.Random(seed).shuffle(order)
    start = ((round_index - 1) * per_round) % len(order)
    picked = (order + order)[start : start + min(per_round, len(order))]
    return picked
