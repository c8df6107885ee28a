"""The information-gain reward term and stratified advantages: hand-computed numbers, the term absent when
the backend cannot score, and the real 135M model preferring evidence that contains the gold answer."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from deepresearch.agent.model.base import ChatModel, ModelError, ScoringUnsupported
from deepresearch.agent.reader import TEMPLATE
from deepresearch.agent.trace.store import TraceStore
from deepresearch.tools.base import ToolOutcome
from deepresearch.train.config import RewardSettings
from deepresearch.train.rounds.information import InformationScorer, evidence_text
from deepresearch.train.rounds.questions import TrainQuestion
from deepresearch.train.rounds.rewards import score_run
from deepresearch.train.rounds.rollout import RolloutGroup
from deepresearch.train.rounds.scoring import RoundScoring, score_groups, search_calls
from deepresearch.train.update.grpo import group_advantages

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

Q = TrainQuestion(id="q1", question="Where was Ada Lovelace born?", answer="London", answer_aliases=["London, UK"])
OUTCOME_ONLY = RewardSettings(correctness=1.0, f1=0.0, citation=0.0, evidence=0.0, cost=0.0)


class FakeScorer(ChatModel):
    """score() answers from a table: (context, continuation) → token logprobs; counts its calls."""

    model_name = "fake"

    def __init__(self, table: dict[tuple[str, str], list[float]], error: ModelError | None = None) -> None:
        self.table, self.error, self.calls = table, error, []

    async def score(self, prompt: str, continuations: list[str], adapter: str | None = None) -> list[list[float]]:
        self.calls.append((prompt, adapter))
        if self.error is not None:
            raise self.error
        context = prompt.removeprefix("Context: ").split("\nQuestion:")[0]
        return [self.table[(context, c)] for c in continuations]

    async def complete(self, request):  # pragma: no cover - never chats
        raise NotImplementedError

    async def load_adapter(self, name, path):  # pragma: no cover
        raise NotImplementedError

    async def unload_adapter(self, name):  # pragma: no cover
        raise NotImplementedError

    def adapters(self) -> list[str]:
        return []


def run_with(store: TraceStore, answer: str, quotes: list[str], searches: int = 1) -> str:
    rid = store.start_run(Q.question, {}, None)
    for i in range(searches):
        store.log_tool_call(rid, ToolOutcome(tool="search", input={"query": f"ada {i}"}, output={"results": []}))
    store.log_tool_call(rid, ToolOutcome(tool="open", input={"url": "http://w/doc/d1"}, output={}))
    for quote in quotes:
        store.log_event(rid, "finding", {"claim": "c", "quote": quote, "source": "http://w/doc/d1", "doc_id": "d1"})
    store.finish_run(rid, "finished", answer, answer, [], {"tool_calls": searches + 1, "llm_tokens": 100})
    return rid


@pytest.fixture
def store(tmp_path: Path) -> TraceStore:
    return TraceStore(tmp_path / "traces.db")


EVIDENCE = "Ada was born in London."
TABLE = {  # mean log-probabilities: gold −0.75 / −2.5, alias −1.0 / −1.0 (with / without evidence)
    (EVIDENCE, " London"): [-1.0, -0.5], ("", " London"): [-3.0, -2.0],
    (EVIDENCE, " London, UK"): [-0.5, -0.5, -2.0], ("", " London, UK"): [-1.0, -1.0, -1.0],
}


# --- the information term -----------------------------------------------------------------------
def test_evidence_is_the_quotes_in_order_once_on_one_line_cut_at_a_word():
    assert evidence_text(["b  c", "a\nb", "b c", ""]) == "b c a b"
    assert evidence_text(["alpha beta gamma"], max_chars=12) == "alpha beta"


async def test_information_is_best_with_evidence_minus_best_without(store):
    rid = run_with(store, "London", [EVIDENCE])
    model = FakeScorer(TABLE)
    info = await InformationScorer(model, adapter="grpo-0002").term(store, rid, Q)
    # best with evidence: max(−0.75, −1.0) = −0.75; best without: max(−2.5, −1.0) = −1.0  →  0.25
    # (the largest per-alias gain, 1.75 for "London", would credit a gold that was merely unlikely alone)
    assert info == pytest.approx(0.25)
    assert model.calls[0][0] == TEMPLATE.format(sentence="", question=Q.question)
    assert {adapter for _, adapter in model.calls} == {"grpo-0002"}  # the re-ranker's adapter, every call


async def test_run_without_findings_gains_nothing_and_no_gold_has_no_term(store):
    scorer = InformationScorer(FakeScorer(TABLE), adapter=None)
    assert await scorer.term(store, run_with(store, "Paris", []), Q) == 0.0
    no_gold = Q.model_copy(update={"answer": None, "answer_aliases": []})
    assert await scorer.term(store, run_with(store, "Paris", [EVIDENCE]), no_gold) is None


def test_information_weight_enters_the_total():
    from deepresearch.evals.run.scored_run import RunFacts

    facts = RunFacts(run_id="r", status="finished", answer="Paris")
    cfg = OUTCOME_ONLY.model_copy(update={"information": 2.0})
    got = score_run(facts, Q, cfg, information=0.25)
    assert got.terms["information"] == 0.25 and got.total == pytest.approx(0.0 + 2.0 * 0.25)
    assert "information" not in score_run(facts, Q, cfg).terms


@pytest.mark.parametrize("error", [ScoringUnsupported("no logprobs"), ModelError("prompt does not fit")])
async def test_term_is_absent_when_the_backend_cannot_score(store, error):
    runs = [run_with(store, "London", [EVIDENCE]), run_with(store, "Paris", [EVIDENCE])]
    model = FakeScorer(TABLE, error=error)
    cfg = OUTCOME_ONLY.model_copy(update={"information": 1.0})
    scoring = RoundScoring(cfg, "none", information=InformationScorer(model, adapter=None))
    scores = await score_groups([RolloutGroup(group_id="g", question=Q, run_ids=runs)], store, scoring)
    for r in scores.groups[0].rewards:
        assert "information" not in r.terms  # absent, not zero
    assert [r.total for r in scores.groups[0].rewards] == [1.0, 0.0]
    if isinstance(error, ScoringUnsupported):
        assert len(model.calls) == 1  # told once that it cannot score: not asked again


async def test_information_is_logged_and_can_split_a_group_the_outcome_cannot(store):
    runs = [run_with(store, "Paris", [EVIDENCE]), run_with(store, "Paris", [])]
    cfg = OUTCOME_ONLY.model_copy(update={"information": 1.0})
    group = RolloutGroup(group_id="g", question=Q, run_ids=runs)
    assert (await score_groups([group], store, RoundScoring(OUTCOME_ONLY, "none"))).groups[0].advantages is None
    scoring = RoundScoring(cfg, "none", information=InformationScorer(FakeScorer(TABLE), None))
    scores = await score_groups([group], store, scoring)
    assert scores.groups[0].advantages == pytest.approx([0.125, -0.125])  # rewards 0.25, 0: both wrong
    assert store.events(runs[0], "reward")[-1].payload["terms"]["information"] == pytest.approx(0.25)


# --- stratified advantages ----------------------------------------------------------------------
def test_stratified_advantages_by_hand():
    # strata {0,1}: [1, 0] → ±0.5;  {2,3}: [1, 0] → ±0.5;  {4}: alone → 0
    (adv,) = group_advantages([[1.0, 0.0, 1.0, 0.0, 5.0]], "none", [[1, 1, 2, 2, 3]])
    assert adv == pytest.approx([0.5, -0.5, 0.5, -0.5, 0.0])
    # unstratified the 5.0 run dominates: mean 1.4
    assert group_advantages([[1.0, 0.0, 1.0, 0.0, 5.0]], "none")[0] == pytest.approx([-0.4, -1.4, -0.4, -1.4, 3.6])
    # "group" scaling divides by the stratum's std: [3, 1] → ±1 / (√2 + 1e-4)
    (adv,) = group_advantages([[3.0, 1.0, 9.0]], "group", [["a", "a", "b"]])
    assert adv == pytest.approx([1 / (2**0.5 + 1e-4), -1 / (2**0.5 + 1e-4), 0.0], rel=1e-6)


def test_stratum_with_equal_rewards_gets_zero_and_an_all_zero_group_is_dropped():
    (adv,) = group_advantages([[1.0, 1.0, 0.0, 2.0]], "none", [[0, 0, 1, 1]])
    assert adv == pytest.approx([0.0, 0.0, -1.0, 1.0])
    # variance across strata only: every run alone in its stratum → nothing comparable → dropped
    assert group_advantages([[1.0, 0.0, 2.0]], "none", [[1, 2, 3]]) == [None]


async def test_score_phase_stratifies_by_search_calls(store):
    runs = [run_with(store, "London", [], searches=1), run_with(store, "Paris", [], searches=1),
            run_with(store, "London", [], searches=3)]
    assert [search_calls(store, r) for r in runs] == [1, 1, 3]  # "open" calls do not count
    group = RolloutGroup(group_id="g", question=Q, run_ids=runs)
    scores = await score_groups([group], store, RoundScoring(OUTCOME_ONLY, "none", "searches"))
    assert scores.groups[0].advantages == pytest.approx([0.5, -0.5, 0.0])
    plain = await score_groups([group], store, RoundScoring(OUTCOME_ONLY, "none"))
    assert plain.groups[0].advantages == pytest.approx([1 / 3, -2 / 3, 1 / 3])


# --- the real 135M model ------------------------------------------------------------------------
def test_real_model_gains_more_from_evidence_that_holds_the_gold(store):
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir

    from ..model.conftest import model_cache_dir

    # A made-up fact: the model cannot know it, so only the evidence can raise the gold's likelihood.
    q = TrainQuestion(id="q", question="Which company manufactured the Zorvex 300 tractor?", answer="Kellner Brothers")
    quote = "The Zorvex 300 is a tractor built by Kellner Brothers of Ohio from 1951."
    gold = run_with(store, "Kellner Brothers", [quote])
    unrelated = run_with(store, "Ford", ["The Amazon river flows through Peru and Brazil into the Atlantic."])

    async def terms() -> list[float | None]:
        model = EmbeddedChatModel.load(embedded_model_dir(model_cache_dir()), EngineConfig(max_batch=2))
        try:
            return await InformationScorer(model, adapter=None).group_terms(store, [gold, unrelated], q)
        finally:
            await model.close()

    with_gold, without = asyncio.run(terms())
    assert with_gold is not None and without is not None
    # measured: +6.89 nats with the gold in the evidence, −1.35 with unrelated evidence (it distracts)
    assert with_gold > 3.0 and with_gold > without + 3.0
