"""Which rounds run, and when: a fixed number over a question set, or `--watch` (train whenever enough new
logged questions or feedback arrive). The CLI parses and prints; the schedule lives here so every front end
(CLI, scripts, tests) trains the same way. Resume is the loop's (TrainLoop(ctx, resume=state)): fixed rounds
continue after its last committed round. `--hours` is a TimeBudget: no round starts that the time left
cannot fit, judged by the longest round so far, so one invocation ends on a committed round.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from ..config import TrainSettings
from .questions import TrainQuestion, round_questions, watch_round

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore

    from .loop import RoundReport

OnRound = Callable[["RoundReport"], None]
# Round k's questions, when they are not a slice of one list (logged replays beside synthesized questions).
Picker = Callable[[int], list[TrainQuestion]]
# For `--watch`: questions synthesized for the round beside the fresh logged ones (async: it may read new sources).
Extra = Callable[[int], Awaitable[list[TrainQuestion]]]


class RoundRunner(Protocol):
    """What the schedule drives: TrainLoop (or a stand-in that records rounds)."""

    @property
    def rounds_done(self) -> int: ...

    async def run_round(self, questions: list[TrainQuestion]) -> RoundReport: ...


@dataclass
class TimeBudget:
    """A bound on one invocation's training time: a round starts only if the longest round so far still fits."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    longest: float = 0.0

    def __post_init__(self) -> None:
        self.started = self.clock()

    def fits_another(self) -> bool:
        return self.clock() - self.started + self.longest <= self.seconds

    def record(self, seconds: float) -> None:
        self.longest = max(self.longest, seconds)


async def _timed_round(loop: RoundRunner, questions: list[TrainQuestion], budget: TimeBudget | None) -> RoundReport:
    if budget is None:
        return await loop.run_round(questions)
    start = budget.clock()
    report = await loop.run_round(questions)
    budget.record(budget.clock() - start)
    return report


async def fixed_rounds(
    loop: RoundRunner, items: list[TrainQuestion], cfg: TrainSettings, rounds: int, on_round: OnRound,
    budget: TimeBudget | None = None, pick: Picker | None = None,
) -> int:
    """Rounds rounds_done+1..`rounds`, each on the k-th seeded slice of `items` (wrapping around: epochs), or what
    `pick(k)` gives, while the budget allows. Returns how many rounds this call ran."""
    ran = 0
    for k in range(loop.rounds_done + 1, rounds + 1):
        if budget is not None and not budget.fits_another():
            break
        picked = pick(k) if pick is not None else round_questions(items, k, cfg.rollout.questions_per_round,
                                                                  cfg.grpo.seed)
        on_round(await _timed_round(loop, picked, budget))
        ran += 1
    return ran


async def watch_rounds(
    loop: RoundRunner, store: TraceStore, cfg: TrainSettings, since: datetime | None, rounds: int,
    on_round: OnRound, budget: TimeBudget | None = None, extra: Extra | None = None,
) -> int:
    """Wait for enough new logged questions, or feedback on logged runs (polling every `cfg.watch_poll_s`),
    then train a round on them (and on `extra(k)`, questions synthesized for round k from what the runs read);
    `rounds` rounds, 0 = until cancelled (or the budget ends)."""
    mark = since or datetime.now(UTC)
    done = 0
    while rounds == 0 or done < rounds:
        if budget is not None and not budget.fits_another():
            break
        fresh = watch_round(store, mark, cfg.watch_min_new_runs)
        if fresh is not None:
            # Taken before the round: runs and feedback arriving while it trains count for the next one.
            mark = datetime.now(UTC)
            picked = fresh[: cfg.rollout.questions_per_round]
            if extra is not None:
                picked = await extra(loop.rounds_done + 1) + picked
            on_round(await _timed_round(loop, picked, budget))
            done += 1
        else:
            await asyncio.sleep(cfg.watch_poll_s)
    return done
