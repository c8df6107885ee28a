"""The trainer's checkpoint: everything a stopped training continues from, committed once per round.

`work_dir/checkpoint/` holds the updater's state (LoRA weights, optimiser, step counters, RNG; absent until
the first update) and `loop.json` (rounds done, the adapter being trained, which question stream the rounds
draw from, one log line per round). A round's checkpoint is written to `checkpoint.new/` and swapped in by
renames, `loop.json` last, so a kill at any moment leaves the previous round's checkpoint or this one's,
never a mixture. `train --resume` continues after the last committed round; a round a kill cut short runs
again from its start, with the same questions and seeds.
"""

from __future__ import annotations

import hashlib
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..update.updater import TRAINER_STATE

LOOP_FILE = "loop.json"


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be resumed (missing, unreadable, or from a different question stream)."""


class LoopState(BaseModel):
    train_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])  # marks this training's adapters
    stream: str = ""  # fingerprint of what the rounds draw from ("" = not checked)
    rounds_done: int = 0
    updates: int = 0  # rounds that updated the weights (the updater state is this training's from the first)
    policy_adapter: str | None = None  # the adapter the next round rolls out with and trains further
    log: list[dict[str, Any]] = Field(default_factory=list)  # RoundReport of each round done, in order

    @property
    def last_published(self) -> str | None:
        """The adapter the last round decided to serve (None if it served none)."""
        last = self.log[-1] if self.log else {}
        return last.get("adapter") if last.get("published") else None


def question_stream(question_ids: Sequence[str], seed: int, per_round: int, group_size: int) -> str:
    """What decides each round's questions and rollouts: resuming on another stream is not a resume."""
    key = "\n".join([*question_ids, f"seed={seed}", f"per_round={per_round}", f"group={group_size}"])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


class Checkpoint:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.staging = self.root.with_name(self.root.name + ".new")
        self.retired = self.root.with_name(self.root.name + ".old")

    def recover(self) -> None:
        """Finish a swap a kill interrupted: a complete staging dir wins, else the retired one comes back."""
        if self.root.is_dir():
            shutil.rmtree(self.retired, ignore_errors=True)
            return
        if (self.staging / LOOP_FILE).is_file():
            self.staging.rename(self.root)
        elif self.retired.is_dir():
            self.retired.rename(self.root)

    def has_updater_state(self) -> bool:
        return (self.root / TRAINER_STATE).is_file()

    def load(self) -> LoopState:
        self.recover()
        file = self.root / LOOP_FILE
        if not file.is_file():
            if self.has_updater_state():  # written before loop.json existed: weights and optimiser only
                return LoopState()
            raise CheckpointError(f"no trainer checkpoint at {self.root} to resume (train without --resume)")
        try:
            return LoopState.model_validate_json(file.read_text())
        except (ValidationError, ValueError) as exc:
            raise CheckpointError(f"{file} is unreadable ({exc.__class__.__name__}); move it away to start "
                                  "afresh") from None

    def begin(self) -> Path:
        """A clean staging directory for this round's updater state."""
        shutil.rmtree(self.staging, ignore_errors=True)
        self.staging.mkdir(parents=True)
        return self.staging

    def commit(self, state: LoopState) -> None:
        """Make `state` (and the updater state staged this round, or else the previous round's) the checkpoint."""
        if not self.staging.is_dir():
            self.begin()
        if not (self.staging / TRAINER_STATE).is_file() and self.has_updater_state():
            # No update this round: the previous round's updater state (everything but loop.json) carries over.
            shutil.copytree(self.root, self.staging, dirs_exist_ok=True, ignore=shutil.ignore_patterns(LOOP_FILE))
        tmp = self.staging / (LOOP_FILE + ".tmp")
        tmp.write_text(state.model_dump_json(indent=2))
        tmp.rename(self.staging / LOOP_FILE)  # the staging dir is complete from here on
        if self.root.is_dir():
            shutil.rmtree(self.retired, ignore_errors=True)
            self.root.rename(self.retired)
        self.staging.rename(self.root)
        shutil.rmtree(self.retired, ignore_errors=True)


def resumable(checkpoint: Checkpoint, stream: str) -> LoopState:
    """The state `train --resume` continues from, if it is one for this question stream."""
    state = checkpoint.load()
    if stream and state.stream and state.stream != stream:
        raise CheckpointError(
            f"the checkpoint in {checkpoint.root} trained on other questions or settings (question set, seed, "
            "questions per round or group size differ): resume with the same ones, or train without --resume "
            "to start afresh")
    if not state.updates and checkpoint.has_updater_state():
        state.updates = 1  # a checkpoint from before loop.json: weights and optimiser only
    return state
