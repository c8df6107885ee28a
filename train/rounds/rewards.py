"""Composable rewards for one run, each term kept and logged so a reward can always be explained.

    outcome   tiered: malformed < wrong < honest "not found" < correct, so guessing never beats abstaining
    f1        token F1 of the answer against the gold answer and its aliases
    em        exact match (logged; weight it through `outcome`, which it implies)
    citation  ½ · share of citations verified against their source + ½ · F1 of cited vs gold documents
    evidence  share of the gold documents the run drew a finding from: did its searches find what the
              answer needs (a verifiable process reward; it credits the planner's and executors' queries
              even when the writer then answers wrong)
    hop_evidence  evidence per hop: the share of the run's bridge hops (follow_up.bridge_steps: a name the
              evidence gave, searched) that led on, i.e. drew a finding from a gold document no earlier finding
              came from (RunFacts.hops). A run whose hop found the next gold document is credited for it even
              when the answer is wrong, a first hop that led on even when a later one did not. Absent without
              gold documents, without a bridge hop, or when every gold document was found before the hop; so a
              run without a hop scores as before. Weight 0.15, half of evidence's: a gold document a hop finds
              counts a little more than one the first round found, never near a right answer's outcome
    cost      −(tool calls · c_tool + LLM tokens / 1000 · c_token): searches the run did not need cost something
    feedback  the user's score on this run; or, for replays of a rated question, score · F1(answer, rated answer)
    judge     an LLM judge's relative rank of this run's report within its group (judge.py)
    information  how much the run's evidence raised the policy's own mean log-probability of the gold answer
              (IGPO, per run; information.py): a dense signal for the searches and quotes even when the
              writer answers wrong; absent when the backend cannot score or there is no gold answer;
              weight 0 by default: on a measured round it did not follow correctness within groups
              (docs/training.md, "Information gain")

A term with no basis (no gold answer, no feedback, judge off) is absent, not zero. The run's reward is
Σ weight · term over the present terms (RewardSettings weights). What a run did (`RunFacts`) is read by
evals/run/scored_run.py, the run-and-score path every caller shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepresearch.evals.run.scored_run import RunFacts
from deepresearch.evals.scoring.metrics import citation_precision_recall, exact_match, f1, normalize_answer
from pydantic import BaseModel

from ..config import RewardSettings
from .questions import TrainQuestion

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore

REWARD_EVENT = "reward"
NOT_FOUND_ANSWERS = frozenset({
    "not found", "unknown", "no answer", "i dont know", "i do not know", "cannot be determined",
    "not enough information", "insufficient information", "answer not found",
})


class RewardBreakdown(BaseModel):
    run_id: str
    terms: dict[str, float]
    total: float
    tier: str | None = None


def is_not_found(answer: str) -> bool:
    norm = normalize_answer(answer)
    return norm in NOT_FOUND_ANSWERS or norm.startswith("not found")


def outcome_tier(facts: RunFacts, q: TrainQuestion, cfg: RewardSettings) -> tuple[str, float] | None:
    malformed = facts.status == "error" or not facts.answer or "writer" in facts.failed_roles
    if malformed:
        return "malformed", cfg.tier_malformed
    if not q.golds:
        return None  # correct or wrong needs a gold answer
    if exact_match(facts.answer, q.golds) or f1(facts.answer, q.golds, q.yes_no) >= cfg.correct_f1:
        return "correct", cfg.tier_correct
    if is_not_found(facts.answer):
        return "not_found", cfg.tier_not_found
    return "wrong", cfg.tier_wrong


def citation_term(facts: RunFacts, q: TrainQuestion) -> float:
    if not facts.citations:
        return 0.0
    verified = sum(bool(c.get("verified")) for c in facts.citations) / len(facts.citations)
    precision, recall = citation_precision_recall((c.get("doc_id") for c in facts.citations), q.gold_doc_ids)
    if precision is None:
        return verified
    gold_f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return 0.5 * verified + 0.5 * gold_f1


def evidence_term(facts: RunFacts, q: TrainQuestion) -> float | None:
    if not q.gold_doc_ids:
        return None
    gold = set(q.gold_doc_ids)
    return len(gold & set(facts.evidence_doc_ids)) / len(gold)


def hop_evidence_term(facts: RunFacts, q: TrainQuestion) -> float | None:
    if not q.gold_doc_ids:
        return None
    gold = set(q.gold_doc_ids)
    found = gold & set(facts.first_round_doc_ids)
    led_on: list[bool] = []  # per bridge hop that had a gold document left to find
    for hop in facts.hops:
        new = gold & set(hop.doc_ids) - found
        if hop.bridge and gold - found:
            led_on.append(bool(new))
        found |= new
    return sum(led_on) / len(led_on) if led_on else None


def feedback_term(facts: RunFacts, q: TrainQuestion) -> float | None:
    if facts.feedback:
        return sum(facts.feedback) / len(facts.feedback)
    if q.reference_feedback is not None and q.reference_answer:
        # A replay of a rated question: agreeing with a liked answer is good, with a disliked one bad.
        agreement = f1(facts.answer, [q.reference_answer]) if facts.answer else 0.0
        return q.reference_feedback * agreement
    return None


def score_run(facts: RunFacts, q: TrainQuestion, cfg: RewardSettings, judge: float | None = None,
              information: float | None = None) -> RewardBreakdown:
    terms: dict[str, float] = {}
    tier = outcome_tier(facts, q, cfg)
    if tier is not None:
        terms["outcome"] = tier[1]
    if q.golds:
        terms["f1"] = f1(facts.answer, q.golds, q.yes_no)
        terms["em"] = exact_match(facts.answer, q.golds)
    terms["citation"] = citation_term(facts, q)
    if (evidence := evidence_term(facts, q)) is not None:
        terms["evidence"] = evidence
    if (hop_evidence := hop_evidence_term(facts, q)) is not None:
        terms["hop_evidence"] = hop_evidence
    terms["cost"] = -(cfg.tool_call_cost * facts.tool_calls + cfg.token_cost_per_1k * facts.llm_tokens / 1000)
    fb = feedback_term(facts, q)
    if fb is not None:
        terms["feedback"] = fb
    if judge is not None:
        terms["judge"] = judge
    if information is not None:
        terms["information"] = information
    weights = {"outcome": cfg.correctness, "f1": cfg.f1, "citation": cfg.citation, "evidence": cfg.evidence,
               "hop_evidence": cfg.hop_evidence, "cost": cfg.cost, "feedback": cfg.feedback, "judge": cfg.judge,
               "information": cfg.information}
    total = sum(weights[k] * v for k, v in terms.items() if k in weights)
    return RewardBreakdown(run_id=facts.run_id, terms=terms, total=total, tier=tier[0] if tier else None)


def log_reward(store: TraceStore, breakdown: RewardBreakdown, group_id: str, advantage: float | None,
               adapter: str | None = None) -> None:
    """Attach the reward (every term), the group and the advantage to the run's trace."""
    store.log_event(breakdown.run_id, REWARD_EVENT, {
        "total": breakdown.total, "terms": breakdown.terms, "tier": breakdown.tier, "group_id": group_id,
        "advantage": advantage, "adapter": adapter,
    })
