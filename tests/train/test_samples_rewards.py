"""Samples read from a real trace store, the reward terms, and the score phase end to end (no model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from deepresearch.agent.model.types import Completion
from deepresearch.agent.trace.records import LLMCall
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.run.scored_run import RunFacts, facts_from_trace
from deepresearch.tools.base import ToolOutcome
from deepresearch.train.config import RewardSettings
from deepresearch.train.rounds.questions import TrainQuestion, questions_from_file, questions_from_runs
from deepresearch.train.rounds.rewards import is_not_found, score_run
from deepresearch.train.rounds.rollout import RolloutGroup
from deepresearch.train.rounds.scoring import RoundScoring, round_samples, score_groups
from deepresearch.train.update.samples import samples_from_events

Q = TrainQuestion(id="q1", question="Where was Ada Lovelace born?", answer="London", answer_aliases=["London, UK"],
                  gold_doc_ids=["d1"])
CFG = RewardSettings()


def completion(prompt: list[int], out: list[int], finish: str = "stop") -> Completion:
    return Completion(text="x", prompt_token_ids=prompt, completion_token_ids=out,
                      logprobs=[-0.5 * (i + 1) for i in range(len(out))], model="m", finish_reason=finish)


def logged_run(store: TraceStore, answer: str, citations: list[dict], tool_calls: int = 1,
               llm_tokens: int = 1000, status: str = "finished", tags: dict | None = None) -> str:
    rid = store.start_run(Q.question, {}, tags)
    store.log_llm_call(rid, LLMCall("planner", [{"role": "user", "content": "q"}], completion([1, 2, 3], [7, 8])))
    store.log_tool_call(rid, ToolOutcome(tool="search", input={"query": "ada"}, output={"results": []}))
    store.log_llm_call(rid, LLMCall("writer", [{"role": "user", "content": "w"}], completion([1, 2, 3, 4, 5], [9])))
    store.finish_run(rid, status, answer, f"# report\n{answer}", citations,
                     {"tool_calls": tool_calls, "llm_tokens": llm_tokens})
    return rid


@pytest.fixture
def store(tmp_path: Path) -> TraceStore:
    return TraceStore(tmp_path / "traces.db")


def test_every_llm_call_becomes_a_sample_with_exact_ids_and_the_run_advantage(store):
    rid = logged_run(store, "London", [])
    store.log_llm_call(rid, LLMCall("executor", [], completion([1], [], finish="stop")))  # empty: skipped
    store.log_llm_call(rid, LLMCall("executor", [], completion([1, 2], [5], finish="error")))  # failed: skipped
    samples, skipped = samples_from_events(rid, "g", store.events(rid), 0.75, {"writer": 0.5})
    assert [(s.role, s.prompt_ids, s.completion_ids) for s in samples] == [
        ("planner", [1, 2, 3], [7, 8]), ("writer", [1, 2, 3, 4, 5], [9])]
    assert samples[0].sampling_logprobs == [-0.5, -1.0]
    assert all(s.advantage == 0.75 for s in samples)
    assert [s.weight for s in samples] == [1.0, 0.5]
    assert [k.reason for k in skipped] == ["empty completion", "the call failed"]


def test_truncated_calls_are_flagged():
    events = [{"kind": "llm", "seq": 1, "payload": {"role": "writer", "prompt_token_ids": [1],
               "completion_token_ids": [2, 3], "logprobs": [-1.0, -1.0], "finish_reason": "length"}}]
    samples, _ = samples_from_events("r", "g", events, 1.0)
    assert samples[0].truncated


def test_outcome_tiers_are_ordered_malformed_wrong_not_found_correct():
    def total(answer: str, status: str = "finished") -> RewardSettings:
        return score_run(RunFacts(run_id="r", status=status, answer=answer), Q, CFG)

    malformed, wrong = total("", "error"), total("Paris")
    not_found, correct = total("not found"), total("london")
    assert [r.tier for r in (malformed, wrong, not_found, correct)] == ["malformed", "wrong", "not_found", "correct"]
    assert malformed.total < wrong.total < not_found.total < correct.total
    assert correct.terms["em"] == 1.0 and wrong.terms["f1"] == 0.0
    assert score_run(RunFacts(run_id="r", status="finished", answer="London, UK"), Q, CFG).tier == "correct"


def test_not_found_phrasings():
    assert is_not_found("Not found.") and is_not_found("unknown") and not is_not_found("London")


def test_citation_term_rewards_verified_gold_citations():
    def cite(doc_id: str, verified: bool) -> dict:
        return {"n": 1, "source": f"http://x/doc/{doc_id}", "doc_id": doc_id, "quote": "q", "verified": verified}

    facts = lambda cs: RunFacts(run_id="r", status="finished", answer="London", citations=cs)  # noqa: E731
    gold_verified = score_run(facts([cite("d1", True)]), Q, CFG).terms["citation"]
    other_verified = score_run(facts([cite("d9", True)]), Q, CFG).terms["citation"]
    gold_unverified = score_run(facts([cite("d1", False)]), Q, CFG).terms["citation"]
    assert gold_verified == 1.0 and other_verified == 0.5 and gold_unverified == 0.5
    assert score_run(facts([]), Q, CFG).terms["citation"] == 0.0
    no_gold = Q.model_copy(update={"gold_doc_ids": []})
    assert score_run(facts([cite("d9", True)]), no_gold, CFG).terms["citation"] == 1.0


def test_evidence_term_is_the_share_of_gold_documents_a_finding_came_from():
    two_gold = Q.model_copy(update={"gold_doc_ids": ["d1", "d2"]})
    facts = lambda ids: RunFacts(run_id="r", status="finished", answer="x", evidence_doc_ids=ids)  # noqa: E731
    assert score_run(facts(["d1", "d9"]), two_gold, CFG).terms["evidence"] == 0.5
    assert score_run(facts(["d2", "d1"]), two_gold, CFG).terms["evidence"] == 1.0
    assert score_run(facts([]), two_gold, CFG).terms["evidence"] == 0.0
    no_gold = Q.model_copy(update={"gold_doc_ids": []})
    assert "evidence" not in score_run(facts(["d1"]), no_gold, CFG).terms  # no basis: absent, not zero
    weighted = RewardSettings(evidence=2.0, correctness=0, f1=0, citation=0, cost=0)
    assert score_run(facts(["d1"]), two_gold, weighted).total == 1.0


def test_cost_penalises_tool_calls_and_tokens():
    cheap = score_run(RunFacts(run_id="r", status="finished", answer="x", tool_calls=1, llm_tokens=1000), Q, CFG)
    dear = score_run(RunFacts(run_id="r", status="finished", answer="x", tool_calls=5, llm_tokens=9000), Q, CFG)
    assert cheap.terms["cost"] == pytest.approx(-(0.02 + 0.005))
    assert dear.total < cheap.total


def test_feedback_direct_and_through_a_rated_reference_answer():
    rated = Q.model_copy(update={"answer": None, "answer_aliases": [], "reference_answer": "London",
                                 "reference_feedback": 1.0})
    agree = score_run(RunFacts(run_id="r", status="finished", answer="London"), rated, CFG)
    disagree = score_run(RunFacts(run_id="r", status="finished", answer="Paris"), rated, CFG)
    assert agree.terms["feedback"] == 1.0 and disagree.terms["feedback"] == 0.0
    assert "outcome" not in agree.terms and "f1" not in agree.terms  # no gold: those terms are absent
    direct = score_run(RunFacts(run_id="r", status="finished", answer="x", feedback=[-1.0, 0.0]), Q, CFG)
    assert direct.terms["feedback"] == -0.5


def test_facts_from_trace_read_status_usage_feedback_and_malformed_roles(store):
    rid = logged_run(store, "London", [{"n": 1, "source": "http://w/doc/d1", "quote": "q", "verified": True}],
                     tool_calls=3, llm_tokens=2000)
    store.log_event(rid, "error", {"role": "writer", "attempt": 2, "error": "bad json"})
    store.add_feedback(rid, 0.5)
    store.log_event(rid, "finding", {"claim": "c", "quote": "q", "source": "http://w/doc/d1", "doc_id": None})
    store.log_event(rid, "finding", {"claim": "c", "quote": "q", "source": "http://w/doc/d7", "doc_id": "d7"})
    store.log_event(rid, "finding", {"claim": "c2", "quote": "q2", "source": "http://w/doc/d7", "doc_id": "d7"})
    facts = facts_from_trace(store, rid, doc_id_for=lambda url: url.rsplit("/", 1)[-1])
    assert (facts.tool_calls, facts.llm_tokens, facts.feedback) == (3, 2000, [0.5])
    assert facts.evidence_doc_ids == ["d1", "d7"]  # by url when the finding has no doc id; each once
    assert facts.found_any(["d1", "d9"]) and not facts.found_any(["d9"])  # the learning demo's gold evidence
    assert facts.citations[0]["doc_id"] == "d1" and facts.failed_roles == ["writer"]
    assert score_run(facts, Q, CFG).tier == "malformed"  # the writer never produced valid output


async def test_score_phase_logs_rewards_and_drops_groups_without_variance(store):
    good = logged_run(store, "London", [])
    bad = logged_run(store, "Paris", [])
    same1, same2 = logged_run(store, "Rome", []), logged_run(store, "Rome", [])
    groups = [RolloutGroup(group_id="g1", question=Q, run_ids=[good, bad]),
              RolloutGroup(group_id="g2", question=Q, run_ids=[same1, same2])]
    scores = await score_groups(groups, store, RoundScoring(CFG, "none"))
    g1, g2 = scores.groups
    assert g1.advantages[0] > 0 > g1.advantages[1] and g2.advantages is None
    event = store.events(good, "reward")[-1].payload
    assert event["group_id"] == "g1" and event["advantage"] == g1.advantages[0] and "outcome" in event["terms"]
    assert store.events(same1, "reward")[-1].payload["advantage"] is None
    samples, _ = round_samples(scores, store)
    assert {s.run_id for s in samples} == {good, bad} and len(samples) == 4
    assert scores.summary()["groups_kept"] == 1


def test_questions_from_runs_skip_rollouts_and_evals_and_carry_feedback(store):
    user = logged_run(store, "London", [])
    store.add_feedback(user, 1.0)
    logged_run(store, "Paris", [], tags={"train_round": 1})
    logged_run(store, "Paris", [], tags={"eval_id": "e1"})
    items = questions_from_runs(store)
    assert len(items) == 1 and items[0].question == Q.question
    assert items[0].reference_answer == "London" and items[0].reference_feedback == 1.0
    assert items[0].source_run_ids == [user]


def test_questions_from_file_filters_by_split(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "q?", "answer": "x", "split": "train", "gold_doc_ids": ["d"]}\n'
                    '{"id": "b", "question": "r?", "answer": "y", "split": "dev"}\n')
    assert [q.id for q in questions_from_file(path, split="train")] == ["a"]
    assert questions_from_file(path)[0].gold_doc_ids == ["d"]


def test_round_questions_walk_one_seeded_shuffle_and_wrap():
    from deepresearch.train.rounds.questions import round_questions

    items = [Q.model_copy(update={"id": str(i)}) for i in range(5)]
    seen = [q.id for k in (1, 2, 3) for q in round_questions(items, k, 2, seed=1)]
    assert len(seen) == 6 and set(seen[:5]) == {str(i) for i in range(5)}  # an epoch before any repeat
    assert seen[5] == seen[0]
    assert round_questions(items, 1, 2, seed=1) == round_questions(items, 1, 2, seed=1)
    assert round_questions([], 1, 2) == []
