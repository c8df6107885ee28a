"""Which rounds run, and when: a fixed number over a question set, or `--watch` (train whenever enough new
logged questions or feedback arrive). The CLI parses and prints; the schedule lives here so every front end
(CLI, scripts, tests) trains the same way. Resume is the loop's (TrainLoop(ctx, resume=True)).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from .config import TrainSettings
from .questions import TrainQuestion, round_questions, watch_round

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore

    from .loop import RoundReport

OnRound = Callable[["RoundReport"], None]


class RoundRunner(Protocol):
    """What the schedule drives: TrainLoop (or a stand-in that records rounds)."""

    async def run_round(self, questions: list[TrainQuestion]) -> RoundReport: ...


async def fixed_rounds(
    loop: RoundRunner, items: list[TrainQuestion], cfg: TrainSettings, rounds: int, on_round: OnRound,
) -> None:
    """Rounds 1..`rounds`, each on the next seeded slice of `items` (wrapping around: epochs)."""
    for k in range(1, rounds + 1):
        picked = round_questions(items, k, cfg.rollout.questions_per_round, cfg.grpo.seed)
        on_round(await loop.run_round(picked))


async def watch_rounds(
    loop: RoundRunner, store: TraceStore, cfg: TrainSettings, since: datetime | None, rounds: int,
    on_round: OnRound,
) -> None:
    """Wait for enough new logged questions, or feedback on logged runs (polling every `cfg.watch_poll_s`),
    then train a round on them; `rounds` rounds, 0 = until cancelled."""
    mark = since or datetime.now(UTC)
    done = 0
    while rounds == 0 or done < rounds:
        fresh = watch_round(store, mark, cfg.watch_min_new_runs)
        if fresh is not None:
            # Taken before the round: runs and feedback arriving while it trains count for the next one.
            mark = datetime.now(UTC)
            on_round(await loop.run_round(fresh[: cfg.rollout.questions_per_round]))
            done += 1
        else:
            await asyncio.sleep(cfg.watch_poll_s)
