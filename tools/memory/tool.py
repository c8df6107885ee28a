"""The `remember` and `recall` tools. Recall also searches local indexes, so user files indexed with
`deepresearch index` come back through the same path as remembered findings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from deepresearch.tools.base import Tool, ToolFailure
from deepresearch.tools.config import MemorySettings
from deepresearch.tools.index.local_index import LocalIndex
from deepresearch.tools.local_urls import local_url
from deepresearch.tools.memory.store import Memory, MemoryStore
from pydantic import BaseModel, Field


class RememberInput(BaseModel):
    text: str = Field(min_length=1, max_length=20_000, description="the finding to keep for later runs")
    source: str = Field("", max_length=2_000, description="where it came from (URL or document id)")
    run_id: str = Field("", max_length=64, description="the run that found it (filled in by the graph)")


class RememberOutput(BaseModel):
    id: str
    stored: bool = Field(description="False when the same finding from the same source was already kept")
    memories: int


class RecallInput(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="what to look for in memory and user files")


class RecalledDocument(BaseModel):
    title: str
    url: str
    doc_id: str
    index: str
    snippet: str
    rank: int


class RecallOutput(BaseModel):
    query: str
    memories: list[Memory]
    documents: list[RecalledDocument]


class RememberTool(Tool[RememberInput, RememberOutput]):
    name: ClassVar[str] = "remember"
    description: ClassVar[str] = "Keep a finding (with its source) for later research runs."
    input_model: ClassVar[type[RememberInput]] = RememberInput

    def __init__(self, store: Callable[[], MemoryStore], settings: MemorySettings):
        self._store = store
        self.settings = settings

    async def run(self, args: RememberInput) -> RememberOutput:
        if len(args.text) > self.settings.max_text_chars:
            raise ToolFailure("too_long", f"a memory holds at most {self.settings.max_text_chars} characters")
        store = await asyncio.to_thread(self._store)
        memory_id, stored = await asyncio.to_thread(store.remember, args.text.strip(), args.source.strip(),
                                                    args.run_id)
        return RememberOutput(id=memory_id, stored=stored, memories=store.count())


class RecallTool(Tool[RecallInput, RecallOutput]):
    name: ClassVar[str] = "recall"
    description: ClassVar[str] = "Recall findings from earlier runs and passages from the user's indexed files."
    input_model: ClassVar[type[RecallInput]] = RecallInput
    plannable: ClassVar[bool] = True
    before_planning: ClassVar[bool] = True  # what earlier runs found about the question goes into the plan

    def notes(self, output: dict[str, Any]) -> list[str]:
        """The memories (findings kept by earlier runs), then the passages of the user's files."""
        notes = [str(m.get("text", "")) for m in output.get("memories") or []]
        return notes + [str(d.get("snippet", "")) for d in output.get("documents") or []]

    def __init__(self, store: Callable[[], MemoryStore], settings: MemorySettings,
                 indexes: Callable[[], list[LocalIndex]]):
        self._store = store
        self.settings = settings
        self._indexes = indexes

    def _documents(self, query: str) -> list[RecalledDocument]:
        if not self.settings.search_indexes:
            return []
        found: list[RecalledDocument] = []
        for index in self._indexes():
            for hit in index.search(query, self.settings.k):
                found.append(RecalledDocument(
                    title=hit.title, url=local_url(index.name, hit.doc_id), doc_id=hit.doc_id, index=index.name,
                    snippet=hit.snippet, rank=hit.rank,
                ))
        found.sort(key=lambda d: d.rank)  # interleave indexes by rank; scores are not comparable across them
        return found[: self.settings.k]

    async def run(self, args: RecallInput) -> RecallOutput:
        store = await asyncio.to_thread(self._store)
        memories = await asyncio.to_thread(store.recall, args.query, self.settings.k)
        memories = [m for m in memories if m.score is not None and m.score >= self.settings.min_similarity]
        documents = await asyncio.to_thread(self._documents, args.query)
        return RecallOutput(query=args.query, memories=memories, documents=documents)
