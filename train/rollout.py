"""Rollout groups: each question answered G times by the real agent graph, sampling on, concurrently.

The runs are ordinary runs (same graph, same tools, same trace) tagged with the training round and
their group, so they can be scored, turned into samples, and told apart from users' runs. Several
model servers can share the work: runs are dealt to them round-robin.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from .questions import TRAIN_TAG, TrainQuestion

if TYPE_CHECKING:
    from deepresearch.agent.config import AgentSettings
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.trace.store import TraceStore
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


async def rollout_groups(
    questions: Sequence[TrainQuestion],
    *,
    models: Sequence[ChatModel],
    toolbox: Toolbox,
    store: TraceStore,
    agent: AgentSettings,
    group_size: int,
    temperature: float,
    round_index: int,
    adapter: str | None = None,
    adapter_roles: frozenset[str] | None = None,
    sampled_roles: frozenset[str] | None = None,
    concurrency: int = 8,
    max_tokens: int = 384,
    seed: int = 0,
    on_run_done: Callable[[], None] | None = None,
) -> list[RolloutGroup]:
    """Run every question `group_size` times; at most `concurrency` runs are in flight (the model
    batches their LLM calls). Returns one group per question with the run ids in member order.
    `sampled_roles`: only these roles sample at `temperature`, the others decode greedily (None = all)."""
    from deepresearch.agent.graph.run import research

    if group_size < 2:
        raise ValueError("a group needs at least 2 runs (GRPO compares runs of the same question)")
    if not models:
        raise ValueError("no model to roll out with")
    groups = [RolloutGroup(group_id=group_id_for(round_index, q), question=q) for q in questions]
    run_ids: dict[tuple[int, int], str] = {}
    gate = asyncio.Semaphore(concurrency)

    async def one(g: int, member: int, model: ChatModel) -> None:
        group = groups[g]
        tags = {TRAIN_TAG: round_index, "group_id": group.group_id, "question_id": group.question.id,
                "member": member}
        async with gate:
            try:
                result = await research(
                    group.question.question, model=model, toolbox=toolbox, store=store, settings=agent,
                    tags=tags, sampling_temperature=temperature, max_tokens=max_tokens, adapter=adapter,
                    adapter_roles=adapter_roles, sampled_roles=sampled_roles,
                    seed=run_seed(seed, round_index, group.question.id, member),
                    settings_snapshot={"system": "train-rollout", "adapter": adapter,
                                       "adapter_roles": sorted(adapter_roles) if adapter_roles else None,
                                       "temperature": temperature,
                                       "sampled_roles": sorted(sampled_roles) if sampled_roles else None,
                                       "agent": agent.model_dump(mode="json")},
                )
                run_ids[(g, member)] = result.run_id
            except Exception as exc:  # one broken run must not sink the round; it is reported
                group.failures.append(f"{type(exc).__name__}: {exc}")
            finally:
                if on_run_done is not None:
                    on_run_done()

    jobs = [(g, m) for m in range(group_size) for g in range(len(groups))]  # spread questions over time
    await asyncio.gather(*(one(g, m, models[i % len(models)]) for i, (g, m) in enumerate(jobs)))
    for g, group in enumerate(groups):
        group.run_ids = [run_ids[(g, m)] for m in range(group_size) if (g, m) in run_ids]
    return groups
