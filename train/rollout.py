"""Rollout groups: each question answered G times by the real agent graph, sampling on, concurrently.

The runs are ordinary runs (same graph, same tools, same trace) tagged with the training round and
their group, so they can be scored, turned into samples, and told apart from users' runs. Several
model servers can share the work: runs are dealt to them round-robin.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deepresearch.agent.model.policy import RunPolicy
from pydantic import BaseModel, Field

from .questions import TRAIN_TAG, TrainQuestion

if TYPE_CHECKING:
    from deepresearch.agent.graph.run import ResearchRuntime


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


async def rollout_groups(
    questions: Sequence[TrainQuestion], runtimes: Sequence[ResearchRuntime], spec: RolloutSpec,
    on_run_done: Callable[[], None] | None = None,
) -> list[RolloutGroup]:
    """Run every question `spec.group_size` times, dealing the runs round-robin to `runtimes` (one per
    model server). Returns one group per question with the run ids in member order."""
    from deepresearch.agent.graph.run import RunOptions, research

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
        tags = {TRAIN_TAG: spec.round_index, "group_id": group.group_id, "question_id": group.question.id,
                "member": member}
        policy = spec.policy.with_seed(run_seed(base_seed, spec.round_index, group.question.id, member))
        snapshot = {"system": "train-rollout", **policy.snapshot(), "agent": runtime.settings.model_dump(mode="json")}
        async with gate:
            try:
                result = await research(group.question.question, runtime, policy,
                                        RunOptions(tags=tags, settings_snapshot=snapshot))
                run_ids[(g, member)] = result.run_id
            except Exception as exc:  # one broken run must not sink the round; it is reported
                group.failures.append(f"{type(exc).__name__}: {exc}")
            finally:
                if on_run_done is not None:
                    on_run_done()

    jobs = [(g, m) for m in range(spec.group_size) for g in range(len(groups))]  # spread questions over time
    await asyncio.gather(*(one(g, m, runtimes[i % len(runtimes)]) for i, (g, m) in enumerate(jobs)))
    for g, group in enumerate(groups):
        group.run_ids = [run_ids[(g, m)] for m in range(spec.group_size) if (g, m) in run_ids]
    return groups
