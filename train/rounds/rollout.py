"""Rollout groups: each question answered G times by the real agent graph, sampling on, concurrently.

The runs are ordinary runs (same graph, same tools, same trace; run through evals/run/scored_run.py like the
eval's graph system) tagged with the training round and their group, so they can be scored, turned into
samples, and told apart from users' runs. Several model servers can share the work: runs are dealt to
them round-robin.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from deepresearch.agent.model.policy import RunPolicy
from pydantic import BaseModel, Field

from .questions import TRAIN_TAG, TrainQuestion

if TYPE_CHECKING:
    from deepresearch.agent.graph.run import ResearchRuntime
    from deepresearch.tools.toolbox import Toolbox


class RolloutGroup(BaseModel):
    group_id: str
    question: TrainQuestion
    run_ids: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list, description="runs that raised before finishing")


def group_id_for(round_index: int, question: TrainQuestion) -> str:
    return f"r{round_index}-{hashlib.sha1(question.id.encode()).hexdigest()[:10]}"


def run_seed(seed: int, round_index: int, question_id: str, member: int) -> int:
    """Distinct, reproducible sampling seed per run: a group's G runs must differ, a rerun must not."""
    digest = hashlib.sha256(f"{seed}:{round_index}:{question_id}:{member}".encode()).hexdigest()
    return int(digest[:8], 16)


@dataclass(frozen=True)
class RolloutSpec:
    """One round's rollouts: `group_size` runs per question, decoded by `policy`. The policy's seed is the
    round's base seed: each run gets its own, derived from it, the round and its place in the group."""

    group_size: int
    round_index: int
    policy: RunPolicy
    concurrency: int = 8  # runs in flight at once (the model batches their LLM calls)
    tags: dict[str, Any] = field(default_factory=dict)  # on every run, beside the round's own (e.g. train_id)


async def rollout_groups(
    questions: Sequence[TrainQuestion], runtimes: Sequence[ResearchRuntime], spec: RolloutSpec,
    on_run_done: Callable[[], None] | None = None, toolbox_for: Callable[[TrainQuestion], Toolbox] | None = None,
) -> list[RolloutGroup]:
    """Run every question `spec.group_size` times, dealing the runs round-robin to `runtimes` (one per
    model server). `toolbox_for(question)`, when given, is the toolbox that question's runs use instead of
    the runtime's (replays search as the question's own run did). Returns one group per question with the
    run ids in member order."""
    from deepresearch.agent.graph.run import RunOptions
    from deepresearch.evals.run.scored_run import run_scored

    if spec.group_size < 2:
        raise ValueError("a group needs at least 2 runs (GRPO compares runs of the same question)")
    if not runtimes:
        raise ValueError("no model to roll out with")
    groups = [RolloutGroup(group_id=group_id_for(spec.round_index, q), question=q) for q in questions]
    run_ids: dict[tuple[int, int], str] = {}
    gate = asyncio.Semaphore(spec.concurrency)
    base_seed = spec.policy.seed or 0

    async def one(g: int, member: int, runtime: ResearchRuntime) -> None:
        group = groups[g]
        tags = {**spec.tags, TRAIN_TAG: spec.round_index, "group_id": group.group_id, "question_id": group.question.id,
                "member": member}
        policy = spec.policy.with_seed(run_seed(base_seed, spec.round_index, group.question.id, member))
        if toolbox_for is not None:
            runtime = replace(runtime, toolbox=toolbox_for(group.question))
        snapshot = {"system": "train-rollout", **policy.snapshot(), "agent": runtime.settings.model_dump(mode="json")}
        async with gate:
            try:
                # No gold or reward here: the score phase scores a whole group at once (the judge ranks
                # its reports against each other) from the trace, with the same facts_from_trace.
                scored = await run_scored(group.question.question, runtime, policy,
                                          RunOptions(tags=tags, settings_snapshot=snapshot))
            finally:
                if on_run_done is not None:
                    on_run_done()
            if scored.run_id is not None:
                run_ids[(g, member)] = scored.run_id
            else:  # one broken run must not sink the round; it is reported
                group.failures.append(scored.error or "the run ended without a result")

    jobs = [(g, m) for m in range(spec.group_size) for g in range(len(groups))]  # spread questions over time
    await asyncio.gather(*(one(g, m, runtimes[i % len(runtimes)]) for i, (g, m) in enumerate(jobs)))
    for g, group in enumerate(groups):
        group.run_ids = [run_ids[(g, m)] for m in range(spec.group_size) if (g, m) in run_ids]
    return groups
