"""Score phase: rewards per run, group-relative advantages, and the round's training samples.

Everything a later reader needs to explain an update is written back to the trace: each run gets a
`reward` event with every reward term, its group and its advantage (None when the group was dropped).
With stratify="searches" the advantages are computed within strata of a group's runs with the same
number of search calls (grpo.group_advantages), read from the runs' `tool` events.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import TYPE_CHECKING, Any

from deepresearch.evals.run.scored_run import facts_from_trace
from pydantic import BaseModel

from ..config import RewardSettings
from ..update.grpo import group_advantages
from ..update.samples import LLM_EVENT, SkippedCall, TrainingSample, samples_from_events
from .information import InformationScorer
from .judge import judge_group
from .rewards import RewardBreakdown, log_reward, score_run
from .rollout import RolloutGroup

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.trace.store import TraceStore


SEARCH_TOOL = "search"


def search_calls(store: TraceStore, run_id: str) -> int:
    """How many times the run called the search tool (its stratum under stratify="searches")."""
    return sum(e.payload.get("tool") == SEARCH_TOOL for e in store.events(run_id, "tool"))


class ScoredGroup(BaseModel):
    group_id: str
    question_id: str
    run_ids: list[str]
    rewards: list[RewardBreakdown]
    advantages: list[float] | None  # None: all rewards equal (or < 2 runs), nothing to learn

    @property
    def reward_mean(self) -> float:
        return mean(r.total for r in self.rewards) if self.rewards else 0.0


class RoundScores(BaseModel):
    groups: list[ScoredGroup]

    @property
    def kept(self) -> list[ScoredGroup]:
        return [g for g in self.groups if g.advantages is not None]

    def summary(self) -> dict[str, Any]:
        rewards = [r for g in self.groups for r in g.rewards]
        terms: dict[str, list[float]] = {}
        for r in rewards:
            for k, v in r.terms.items():
                terms.setdefault(k, []).append(v)
        tiers: dict[str, int] = {}
        for r in rewards:
            if r.tier:
                tiers[r.tier] = tiers.get(r.tier, 0) + 1
        return {
            "runs": len(rewards), "groups": len(self.groups), "groups_kept": len(self.kept),
            "reward_mean": mean(r.total for r in rewards) if rewards else None,
            "terms": {k: mean(v) for k, v in sorted(terms.items())}, "tiers": tiers,
        }


@dataclass(frozen=True)
class RoundScoring:
    """How a round's runs are scored: the reward terms' weights, how advantages are computed (GRPOSettings'
    scale_rewards and stratify), and what some terms need: URLs → doc ids for the evidence term, a judge
    model for the judge term, a scorer for the information term (used only when its weight is non-zero: it
    costs two forward passes per run)."""

    rewards: RewardSettings
    scale_rewards: str
    stratify: str = "none"
    doc_id_for: Callable[[str], str | None] | None = None
    judge_model: ChatModel | None = None
    information: InformationScorer | None = None


async def score_groups(
    groups: Sequence[RolloutGroup],
    store: TraceStore,
    scoring: RoundScoring,
    *,
    adapter: str | None = None,
    on_group_done: Callable[[], None] | None = None,
) -> RoundScores:
    """Rewards for every run, then group-relative advantages; each run's `reward` event names `adapter`."""
    cfg, information, judge_model = scoring.rewards, scoring.information, scoring.judge_model
    scored: list[ScoredGroup] = []
    for group in groups:
        facts = [facts_from_trace(store, rid, scoring.doc_id_for) for rid in group.run_ids]
        judged: list[float] | None = None
        if judge_model is not None and cfg.judge > 0 and len(facts) >= 2:
            reports = [store.get_run(f.run_id).report or f.answer for f in facts]
            judged = await judge_group(judge_model, group.question.question, reports)
        gains: list[float | None] = [None] * len(facts)
        if information is not None and cfg.information != 0:
            gains = await information.group_terms(store, group.run_ids, group.question)
        rewards = [score_run(f, group.question, cfg, judged[i] if judged else None, gains[i])
                   for i, f in enumerate(facts)]
        scored.append(ScoredGroup(group_id=group.group_id, question_id=group.question.id, run_ids=group.run_ids,
                                  rewards=rewards, advantages=None))
        if on_group_done is not None:
            on_group_done()
    by_searches = scoring.stratify == "searches"
    strata = [[search_calls(store, rid) for rid in g.run_ids] for g in scored] if by_searches else None
    advantages = group_advantages([[r.total for r in g.rewards] for g in scored], scoring.scale_rewards, strata)
    for g, adv in zip(scored, advantages, strict=True):
        g.advantages = adv
        for i, r in enumerate(g.rewards):
            log_reward(store, r, g.group_id, adv[i] if adv is not None else None, adapter)
    return RoundScores(groups=scored)


def round_samples(
    scores: RoundScores, store: TraceStore, role_weights: dict[str, float] | None = None
) -> tuple[list[TrainingSample], list[SkippedCall]]:
    """Every LLM call of every run in a kept group, carrying its run's advantage."""
    samples: list[TrainingSample] = []
    skipped: list[SkippedCall] = []
    for g in scores.kept:
        assert g.advantages is not None
        for run_id, adv in zip(g.run_ids, g.advantages, strict=True):
            got, bad = samples_from_events(run_id, g.group_id, store.events(run_id, LLM_EVENT), adv, role_weights)
            samples += got
            skipped += bad
    return samples, skipped
