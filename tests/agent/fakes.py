"""A scripted chat model and a dictionary-backed toolbox, for graph-logic tests only.

The real model and real tools are exercised in tests/agent/test_ask_e2e.py and the tools' own tests.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.types import ChatRequest, Completion
from deepresearch.agent.prompts import ROLES, load_prompt
from deepresearch.tools.base import Tool, ToolFailure, ToolOutcome
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.search.tool import SearchTool
from pydantic import BaseModel


def role_of(request: ChatRequest) -> str:
    system = request.messages[0].content
    for role in ROLES:
        if system.startswith(load_prompt(role).system.template[:40]):
            return role
    raise AssertionError(f"unknown role for system prompt {system[:60]!r}")


Script = Callable[[str, ChatRequest], Any]  # (role, request) -> JSON value or raw str


class ScriptedModel(ChatModel):
    """Replies what `script(role, request)` returns: a JSON value (dumped) or a raw string."""

    model_name = "scripted"

    def __init__(self, script: Script, delay_s: float = 0.0):
        self.script = script
        self.delay_s = delay_s
        self.requests: list[tuple[str, ChatRequest]] = []
        self.scored: list[tuple[str, str | None]] = []  # (prompt, adapter) of every `score` call
        self.concurrent = 0
        self.max_concurrent = 0

    async def complete(self, request: ChatRequest) -> Completion:
        role = role_of(request)
        self.requests.append((role, request))
        self.concurrent += 1
        self.max_concurrent = max(self.max_concurrent, self.concurrent)
        try:
            await asyncio.sleep(self.delay_s)
            value = self.script(role, request)
        finally:
            self.concurrent -= 1
        text = value if isinstance(value, str) else json.dumps(value)
        n = len(text) // 4 + 1
        return Completion(text=text, prompt_token_ids=list(range(20)), completion_token_ids=list(range(n)),
                          logprobs=[-0.5] * n, model=self.model_name, adapter=request.adapter)

    async def load_adapter(self, name: str, path: Path) -> None:
        raise NotImplementedError

    async def unload_adapter(self, name: str) -> None:
        raise NotImplementedError

    def adapters(self) -> list[str]:
        return []

    async def score(self, prompt: str, continuations: list[str], adapter: str | None = None) -> list[list[float]]:
        """With a `scorer(prompt, continuation) -> logprob`, scores like a backend that can; else cannot."""
        self.scored.append((prompt, adapter))
        scorer = getattr(self, "scorer", None)
        if scorer is None:
            return await super().score(prompt, continuations, adapter)
        return [[scorer(prompt, c)] for c in continuations]

    def calls(self, role: str) -> int:
        return sum(1 for r, _ in self.requests if r == role)


class _Query(BaseModel):
    query: str


class _Url(BaseModel):
    url: str


class _Hits(BaseModel):
    hits: list[dict[str, Any]]


class _Page(BaseModel):
    url: str
    title: str
    text: str
    doc_id: str | None = None


class DictSearch(SearchTool):
    """The search tool (how the agent uses it: its arguments, observation and sources) over a dict."""

    description = "search the test corpus"
    input_model = _Query

    def __init__(self, docs: dict[str, tuple[str, str]]):
        self.docs = docs

    async def close(self) -> None:
        pass

    async def run(self, args: _Query) -> _Hits:  # type: ignore[override]
        words = set(args.query.lower().split())
        scored = sorted(self.docs.items(), key=lambda kv: -len(words & set(kv[1][1].lower().split())))
        hits = [{"title": t, "url": f"local://test/{d}", "snippet": x[:80], "backend": "dict", "rank": i + 1,
                 "doc_id": d} for i, (d, (t, x)) in enumerate(scored[:3]) if words & set(x.lower().split())]
        return _Hits(hits=hits)


class DictOpen(BrowserTool):
    """The open tool (how the agent uses it) over a dict."""

    description = "open a test document"
    input_model = _Url

    def __init__(self, docs: dict[str, tuple[str, str]]):
        self.docs = docs

    async def close(self) -> None:
        pass

    async def run(self, args: _Url) -> _Page:  # type: ignore[override]
        doc_id = args.url.rsplit("/", 1)[-1]
        if doc_id not in self.docs:
            raise ToolFailure("not_found", f"no document {args.url}")
        title, text = self.docs[doc_id]
        return _Page(url=args.url, title=title, text=text, doc_id=doc_id)


class DictToolbox:
    """Same surface as tools.toolbox.Toolbox: names(), plannable(), find(), invoke(), source_text(), close()."""

    def __init__(self, docs: dict[str, tuple[str, str]], embed: Any = None):
        self.docs = docs
        self.embed = embed  # sentence embeddings, as Toolbox.embed (None: none here)
        self.tools: dict[str, Tool] = {t.name: t for t in (DictSearch(docs), DictOpen(docs))}
        self.invocations: list[tuple[str, dict]] = []

    def names(self) -> list[str]:
        return list(self.tools)

    def plannable(self) -> list[str]:
        return [name for name, tool in self.tools.items() if tool.plannable]

    def find(self, name: str) -> Tool | None:
        return self.tools.get(name)

    async def invoke(self, name: str, raw: dict[str, Any]) -> ToolOutcome:
        self.invocations.append((name, raw))
        if name not in self.tools:
            return ToolOutcome(tool=name, input=raw, error=f"unknown tool {name}", error_kind="unknown_tool")
        return await self.tools[name].invoke(raw)

    def source_text(self, url: str) -> str | None:
        doc = self.docs.get(url.rsplit("/", 1)[-1])
        return doc[1] if doc else None

    async def close(self) -> None:
        pass
