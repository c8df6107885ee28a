"""The trainer's checkpoint: committed whole once per round, recovered after a kill at any point of the swap,
refused with a clear error when it cannot be resumed; the round schedule continues after it and --hours
bounds one invocation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.train.config import RolloutSettings, TrainSettings
from deepresearch.train.rounds.checkpoint import (
    LOOP_FILE,
    Checkpoint,
    CheckpointError,
    LoopState,
    question_stream,
    resumable,
)
from deepresearch.train.rounds.loop import RoundReport
from deepresearch.train.rounds.questions import TrainQuestion, round_questions
from deepresearch.train.rounds.schedule import TimeBudget, fixed_rounds


def stage_updater(ckpt: Checkpoint, weights: str) -> None:
    staging = ckpt.begin()
    (staging / "trainer_state.json").write_text(json.dumps({"global_step": 1, "rounds": 1}))
    (staging / "adapter_model.safetensors").write_text(weights)


def test_commit_swaps_in_the_new_round_and_carries_the_weights_over_a_round_without_update(tmp_path: Path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    stage_updater(ckpt, "w1")
    ckpt.commit(LoopState(rounds_done=1, updates=1))
    ckpt.begin()  # round 2 makes no update
    ckpt.commit(LoopState(rounds_done=2, updates=1))
    assert ckpt.load().rounds_done == 2
    assert (ckpt.root / "adapter_model.safetensors").read_text() == "w1"
    assert not ckpt.staging.exists() and not ckpt.retired.exists()


def test_a_kill_before_the_loop_file_is_written_keeps_the_previous_round(tmp_path: Path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    stage_updater(ckpt, "w1")
    ckpt.commit(LoopState(rounds_done=1, updates=1))
    stage_updater(ckpt, "w2")  # round 2's update saved; killed before its commit
    again = Checkpoint(tmp_path / "checkpoint")
    assert again.load().rounds_done == 1
    assert (again.root / "adapter_model.safetensors").read_text() == "w1"


@pytest.mark.parametrize("renamed", [0, 1])
def test_a_kill_between_the_renames_recovers_a_whole_checkpoint(tmp_path: Path, renamed: int):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    stage_updater(ckpt, "w1")
    ckpt.commit(LoopState(rounds_done=1, updates=1))
    stage_updater(ckpt, "w2")
    (ckpt.staging / LOOP_FILE).write_text(LoopState(rounds_done=2, updates=2).model_dump_json())
    ckpt.root.rename(ckpt.retired)  # the first rename of the swap happened, the second did not
    if renamed:  # …or the staging dir is incomplete: the retired one comes back
        (ckpt.staging / LOOP_FILE).unlink()
    state = Checkpoint(tmp_path / "checkpoint").load()
    assert state.rounds_done == (1 if renamed else 2)
    assert (ckpt.root / "adapter_model.safetensors").read_text() == ("w1" if renamed else "w2")


def test_resume_errors_say_what_to_do(tmp_path: Path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    with pytest.raises(CheckpointError, match=r"no trainer checkpoint .*\(train without --resume\)"):
        resumable(ckpt, "")
    ckpt.commit(LoopState(stream="aaa", rounds_done=1))
    with pytest.raises(CheckpointError, match="other questions or settings"):
        resumable(ckpt, "bbb")
    assert resumable(ckpt, "aaa").rounds_done == 1
    (ckpt.root / LOOP_FILE).write_text("{not json")
    with pytest.raises(CheckpointError, match="unreadable"):
        resumable(ckpt, "aaa")


def test_a_checkpoint_from_before_the_loop_file_resumes_its_weights(tmp_path: Path):
    ckpt = Checkpoint(tmp_path / "checkpoint")
    ckpt.root.mkdir()
    (ckpt.root / "trainer_state.json").write_text(json.dumps({"global_step": 3, "rounds": 2}))
    state = resumable(ckpt, "any")
    assert state.rounds_done == 0 and state.updates == 1


def test_the_stream_names_questions_order_and_settings():
    base = question_stream(["a", "b"], 0, 4, 8)
    assert base == question_stream(["a", "b"], 0, 4, 8)
    assert len({base, question_stream(["b", "a"], 0, 4, 8), question_stream(["a", "b"], 1, 4, 8),
                question_stream(["a", "b"], 0, 2, 8), question_stream(["a", "b"], 0, 4, 4)}) == 5


class ResumableLoop:
    """Stands in for TrainLoop: records each round's questions; its rounds_done is where a resume starts.
    Each round takes `seconds` of a clock the test owns."""

    def __init__(self, done: int = 0, seconds: float = 0.0):
        self.rounds_done, self.seconds, self.now = done, seconds, 0.0
        self.rounds: list[list[str]] = []

    async def run_round(self, questions):
        self.now += self.seconds
        self.rounds.append([q.id for q in questions])
        self.rounds_done += 1
        return RoundReport(round=self.rounds_done)


ITEMS = [TrainQuestion(id=f"q{i}", question=f"question {i}?") for i in range(7)]
CFG = TrainSettings(rollout=RolloutSettings(questions_per_round=2))


async def test_rounds_split_over_invocations_draw_what_one_invocation_draws():
    whole = ResumableLoop()
    assert await fixed_rounds(whole, ITEMS, CFG, 5, lambda r: None) == 5
    first, second = ResumableLoop(), None
    assert await fixed_rounds(first, ITEMS, CFG, 2, lambda r: None) == 2
    second = ResumableLoop(done=first.rounds_done)
    assert await fixed_rounds(second, ITEMS, CFG, 5, lambda r: None) == 3
    assert first.rounds + second.rounds == whole.rounds
    assert whole.rounds[3] == [q.id for q in round_questions(ITEMS, 4, 2, CFG.grpo.seed)]


async def test_hours_start_no_round_the_time_left_cannot_fit():
    loop = ResumableLoop(seconds=50)
    budget = TimeBudget(seconds=120, clock=lambda: loop.now)
    # Rounds of 50 s in 120 s: the third would end at 150 s, past the budget, so it does not start.
    assert await fixed_rounds(loop, ITEMS, CFG, 10, lambda r: None, budget) == 2
    assert loop.rounds_done == 2 and loop.now == 100
