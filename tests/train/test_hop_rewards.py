"""The training signal per hop (train/rounds/rewards.py `hop_evidence`, read per hop by evals/run/scored_run.py):
real graph runs (scripted model, dictionary corpus, as tests/agent builds them) of a three-document chain, their
facts read back from the trace the way the trainer's score phase reads them, scored against the question's gold."""

from __future__ import annotations

from pathlib import Path

import pytest
from deepresearch.agent.config import AgentSettings, BudgetSettings
from deepresearch.agent.graph.events import BridgeChosen, FindingMade, log_event
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.graph.state import Finding
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.run.scored_run import HopFacts, RunFacts, facts_from_trace
from deepresearch.train.config import RewardSettings
from deepresearch.train.rounds.questions import TrainQuestion
from deepresearch.train.rounds.rewards import score_run

from tests.agent.fakes import DictToolbox, ScriptedModel

# The play names its author (the bridge); her page names her husband; his page holds the answer. The question's
# own words are in the play's page only, so the first round finds that and a hop is needed for the rest.
QUESTION = "When was the spouse of the playwright who wrote The City Heiress born?"
DOCS = {
    "heiress": ("The City Heiress", "The City Heiress is a comedy by Aphra Behn, first staged at Dorset Garden in "
                                    "1682."),
    "behn": ("Aphra Behn", "Aphra Behn, born 1640, married Johan Behn in 1664."),
    "johan": ("Johan Behn", "Johan, Hamburg merchant, born 1630."),
    "garden": ("Dorset Garden", "Dorset Garden opened 1671."),
}
GOLD = TrainQuestion(id="q", question=QUESTION, answer="1630", gold_doc_ids=["heiress", "behn", "johan"])
CFG = RewardSettings()
NO_HOP_WEIGHT = CFG.model_copy(update={"hop_evidence": 0.0})


def script(bridges: list[str]):
    """A model that plans one search, keeps every source's first quote, picks `bridges` in turn for the hops and
    answers with the reader's best option."""

    def reply(role, request):
        props = request.json_schema["properties"]
        if role == "planner":
            return {"steps": [{"goal": "find the play", "tool": "search", "query": "The City Heiress playwright",
                               "done_when": "found"}]}
        if role == "extractor":
            return {"relevant": True, "quote": props["quote"]["enum"][0]}
        if role == "executor":
            return {"tool": "done", "input": "ok"}
        if role == "coordinator":  # the bridge choice (agent.bridge_choice = "model")
            name = bridges.pop(0)
            assert name in props["search"]["enum"]
            return {"search": name}
        if role == "writer":
            return {"answer": props["answer"]["enum"][0]}
        raise AssertionError(role)

    return reply


async def facts_of_run(tmp_path: Path, bridges: list[str], rounds: int) -> RunFacts:
    store = TraceStore(tmp_path / f"traces-{rounds}.db")
    settings = AgentSettings(budget=BudgetSettings(max_rounds=rounds), bridge_choice="model", hop_skip_confidence=0)
    runtime = ResearchRuntime(model=ScriptedModel(script(bridges)), toolbox=DictToolbox(dict(DOCS)), store=store,
                              settings=settings)
    result = await research(QUESTION, runtime, RunPolicy(), RunOptions())
    assert result.status == "finished" and not bridges  # every scripted bridge was searched
    return facts_from_trace(store, result.run_id)


async def test_a_hop_that_finds_the_next_gold_document_is_credited_though_the_answer_is_wrong(tmp_path):
    facts = await facts_of_run(tmp_path, ["Aphra Behn"], rounds=2)
    assert facts.first_round_doc_ids == ["heiress"]
    assert facts.hops == [HopFacts(searches=["Aphra Behn"], bridge=True, doc_ids=["behn"])]
    assert facts.evidence_doc_ids == ["heiress", "behn"]  # the evidence term reads all of them, as before
    reward = score_run(facts, GOLD, CFG)
    assert facts.answer == "1640" and reward.tier == "wrong"  # her birth year: the husband's page was not reached
    assert reward.terms["evidence"] == pytest.approx(2 / 3)
    assert reward.terms["hop_evidence"] == 1.0
    assert reward.total - score_run(facts, GOLD, NO_HOP_WEIGHT).total == pytest.approx(CFG.hop_evidence)
    assert CFG.hop_evidence > 0
    # no gold documents, no basis: absent
    assert "hop_evidence" not in score_run(facts, GOLD.model_copy(update={"gold_doc_ids": []}), CFG).terms


async def test_a_hop_that_finds_nothing_new_gets_no_credit(tmp_path):
    facts = await facts_of_run(tmp_path, ["Dorset Garden"], rounds=2)
    assert facts.first_round_doc_ids == ["heiress"]
    assert facts.hops == [HopFacts(searches=["Dorset Garden"], bridge=True, doc_ids=["garden"])]
    reward = score_run(facts, GOLD, CFG)
    assert reward.terms["hop_evidence"] == 0.0  # present: the hop had gold documents left to find
    assert reward.total == score_run(facts, GOLD, NO_HOP_WEIGHT).total


async def test_a_run_without_a_hop_has_no_hop_term_and_scores_as_before(tmp_path):
    facts = await facts_of_run(tmp_path, [], rounds=1)  # the round budget ends the run before a hop
    assert facts.first_round_doc_ids == ["heiress"] and facts.hops == []
    reward = score_run(facts, GOLD, CFG)
    assert "hop_evidence" not in reward.terms and reward.terms["evidence"] == pytest.approx(1 / 3)
    assert reward == score_run(facts, GOLD, NO_HOP_WEIGHT)
    # the same question with a round left for the hop: the term is there
    hopped = await facts_of_run(tmp_path, ["Aphra Behn"], rounds=2)
    assert score_run(hopped, GOLD, CFG).terms.keys() - reward.terms.keys() == {"hop_evidence"}


async def test_each_hop_is_credited_on_its_own(tmp_path):
    """The first hop found the bridge's page, the second searched a name that led nowhere: half the credit, where
    a reward for the last hop only would give none."""
    facts = await facts_of_run(tmp_path, ["Aphra Behn", "Dorset Garden"], rounds=3)
    assert [(h.searches, h.doc_ids) for h in facts.hops] == [(["Aphra Behn"], ["behn"]),
                                                            (["Dorset Garden"], ["garden"])]
    assert score_run(facts, GOLD, CFG).terms["hop_evidence"] == 0.5


def test_hops_read_from_the_trace_in_order_and_what_does_not_count(tmp_path):
    """Findings belong to the last decision logged before them; decisions logged together (a search per option of
    an "A or B" question) are one hop, not a bridge (no names' sentences logged). A hop made when every gold
    document was found already has nothing to find: not counted."""
    store = TraceStore(tmp_path / "traces.db")
    run_id = store.start_run("Which is older, Ada or Babbage?", {})

    def finding(doc_id: str) -> FindingMade:
        return FindingMade(Finding(step_id=1, claim="c", quote="q", source=f"local://test/{doc_id}", title="t",
                                   doc_id=doc_id, start=0, end=1))

    for event in (finding("d1"), BridgeChosen(search="Ada", options=["Ada", "Babbage"]),
                  BridgeChosen(search="Babbage", options=["Ada", "Babbage"]), finding("d2"), finding("d1")):
        log_event(store, run_id, event)
    store.finish_run(run_id, "finished", "Babbage", None, [], {})
    facts = facts_from_trace(store, run_id)
    assert facts.first_round_doc_ids == ["d1"] and facts.evidence_doc_ids == ["d1", "d2"]
    assert facts.hops == [HopFacts(searches=["Ada", "Babbage"], bridge=False, doc_ids=["d2", "d1"])]
    q = TrainQuestion(id="q", question="Which is older, Ada or Babbage?", answer="Babbage", gold_doc_ids=["d1", "d2"])
    assert "hop_evidence" not in score_run(facts, q, CFG).terms  # option searches are not a bridge hop
    bridge = HopFacts(searches=["Babbage"], bridge=True, doc_ids=["d2"])
    assert score_run(facts.model_copy(update={"hops": [bridge]}), q, CFG).terms["hop_evidence"] == 1.0
    found_first = facts.model_copy(update={"first_round_doc_ids": ["d1", "d2"], "hops": [bridge]})
    assert "hop_evidence" not in score_run(found_first, q, CFG).terms
