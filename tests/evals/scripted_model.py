"""A scripted ChatModel for pure runner-logic tests (the real model is in test_embedded_eval.py).

It answers each request with `answers[question]` (found in the user message), as JSON when a
schema is given — or with what `script(request)` returns (a dict = parsed JSON) — counts
concurrency, and can log every call to a file (for the kill test).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.types import ChatRequest, Completion


class ScriptedModel(ChatModel):
    model_name = "scripted"

    def __init__(self, answers: dict[str, str], delay_s: float = 0.0, call_log: Path | None = None,
                 fail_on: set[str] | None = None, script: Callable[[ChatRequest], Any] | None = None):
        self.answers = answers
        self.script = script
        self.delay_s = delay_s
        self.call_log = call_log
        self.fail_on = fail_on or set()
        self.requests: list[ChatRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._adapters: list[str] = []

    def _question(self, request: ChatRequest) -> str:
        user = request.messages[-1].content
        for question in self.answers:
            if question in user:
                return question
        raise AssertionError(f"no scripted answer for {user[:80]!r}")

    async def complete(self, request: ChatRequest) -> Completion:
        question = self._question(request)
        self.requests.append(request)
        if self.call_log is not None:
            with self.call_log.open("a") as fh:
                fh.write(f"{os.getpid()}\t{question}\n")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        if question in self.fail_on:
            from deepresearch.agent.model.base import ModelError

            raise ModelError("scripted failure")
        if self.script is not None:
            value = self.script(request)
            parsed, text = (value, json.dumps(value)) if isinstance(value, dict) else (None, str(value))
        else:
            answer = self.answers[question]
            parsed = {"answer": answer} if request.json_schema else None
            text = json.dumps(parsed) if parsed else answer
        n = len(text.split())
        return Completion(
            text=text, parsed=parsed, prompt_token_ids=list(range(10)), completion_token_ids=list(range(n)),
            logprobs=[-0.1] * n, model=self.model_name, adapter=request.adapter,
        )

    async def load_adapter(self, name: str, path: Path) -> None:
        self._adapters.append(name)

    async def unload_adapter(self, name: str) -> None:
        self._adapters.remove(name)

    def adapters(self) -> list[str]:
        return list(self._adapters)
