"""The LLM-judge reward's parsing, and `train --watch` picking up new runs and feedback (scripted parts)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.types import ChatRequest, Completion
from deepresearch.agent.trace.store import TraceStore
from deepresearch.train.config import TrainSettings
from deepresearch.train.rounds.judge import judge_group
from deepresearch.train.rounds.loop import RoundReport


class ScriptedJudge(ChatModel):
    """Answers every request with a fixed JSON value: pure logic under test, no model."""

    model_name = "judge"

    def __init__(self, value):
        self.value = value
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        return Completion(text=str(self.value), parsed=self.value if isinstance(self.value, dict) else None,
                          prompt_token_ids=[1], completion_token_ids=[2], logprobs=[-0.1], model="judge")

    async def load_adapter(self, name, path):
        raise NotImplementedError

    async def unload_adapter(self, name):
        raise NotImplementedError

    def adapters(self):
        return []


async def test_judge_scores_are_scaled_and_bad_replies_give_none():
    judge = ScriptedJudge({"scores": [10, 2.5, 40]})
    assert await judge_group(judge, "q?", ["a", "b", "c"]) == [1.0, 0.25, 1.0]
    request = judge.requests[0]
    assert request.json_schema["properties"]["scores"]["minItems"] == 3
    assert "Report 3" in request.messages[-1].content
    assert await judge_group(ScriptedJudge({"scores": [1, 2]}), "q?", ["a", "b", "c"]) is None
    assert await judge_group(ScriptedJudge("not json"), "q?", ["a", "b"]) is None
    assert await judge_group(ScriptedJudge({"scores": [1]}), "q?", ["only one"]) is None


class RecordingLoop:
    def __init__(self):
        self.rounds: list[list[str]] = []

    async def run_round(self, questions):
        self.rounds.append([q.question for q in questions])
        return RoundReport(round=len(self.rounds))


class Bar:
    class console:  # noqa: N801 - mimics rich Progress.console
        lines: list[str] = []

        @classmethod
        def print(cls, text, **kw):
            cls.lines.append(str(text))


async def test_watch_trains_when_enough_new_questions_or_feedback_arrive(tmp_path: Path):
    from deepresearch.train.rounds.schedule import watch_rounds

    store = TraceStore(tmp_path / "t.db")
    cfg = TrainSettings(watch_poll_s=0.05, watch_min_new_runs=2)
    old = store.start_run("an old question", {})
    store.finish_run(old, "finished", "x", "r", [], {})
    loop = RecordingLoop()
    task = asyncio.create_task(watch_rounds(loop, store, cfg, None, 2, lambda report: Bar.console.print(report.line())))
    await asyncio.sleep(0.2)
    assert loop.rounds == []  # nothing new yet
    for q in ("first new question", "second new question"):
        store.start_run(q, {})
    store.start_run("a rollout", {}, {"train_round": 3})  # never counts
    await asyncio.sleep(0.3)
    assert sorted(loop.rounds[0]) == ["first new question", "second new question"]
    store.add_feedback(old, -1.0)  # feedback on an old run is enough on its own
    await asyncio.wait_for(task, timeout=5)
    assert loop.rounds[1] == ["an old question"]
    store.close()
