"""The one interface every role and the trainer use to talk to a model."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from .types import ChatRequest, Completion, Message, Sampling


class ModelError(RuntimeError):
    """A model backend failed in a way the caller should show the user (one line)."""


class ScoringUnsupported(ModelError):
    """The backend cannot return the log-probabilities of given text."""


BASE_MODEL = ""  # the adapter name that asks for the base model even when an adapter is active


class ChatModel(ABC):
    """A chat model that returns token-exact completions.

    `chat` may be called concurrently from many coroutines; backends batch those calls.
    """

    model_name: str
    # Whether the model writes prose worth checking sentence by sentence (a served model: the written report,
    # agent/graph/report/); the embedded 135M chooses among what the rules offer instead.
    writes: bool = False

    @abstractmethod
    async def complete(self, request: ChatRequest) -> Completion: ...

    async def chat(
        self,
        messages: list[Message] | list[dict[str, str]],
        schema: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
        adapter: str | None = None,
    ) -> Completion:
        msgs = [m if isinstance(m, Message) else Message(**m) for m in messages]
        return await self.complete(
            ChatRequest(messages=msgs, json_schema=schema, sampling=sampling or Sampling(), adapter=adapter)
        )

    async def chat_many(self, requests: list[ChatRequest]) -> list[Completion]:
        """Submit many requests at once; the backend batches them."""
        return list(await asyncio.gather(*(self.complete(r) for r in requests)))

    async def score(self, prompt: str, continuations: list[str], adapter: str | None = None) -> list[list[float]]:
        """Log-probability of each token of each continuation right after `prompt` (raw text, no chat
        template): how likely the policy finds an answer given its evidence. Backends that cannot
        score raise ScoringUnsupported; callers then go without."""
        raise ScoringUnsupported(f"{type(self).__name__} cannot score continuations")

    # --- LoRA adapters, by name -------------------------------------------------------
    @abstractmethod
    async def load_adapter(self, name: str, path: Path) -> None: ...

    @abstractmethod
    async def unload_adapter(self, name: str) -> None: ...

    @abstractmethod
    def adapters(self) -> list[str]: ...

    active_adapter: str | None = None  # used when a request names no adapter (None); BASE_MODEL names none

    def resolve_adapter(self, requested: str | None) -> str | None:
        """The adapter a request runs with: the one it names, the active one if it names none, no adapter
        for BASE_MODEL (a role outside a scoped adapter's roles)."""
        if requested == BASE_MODEL:
            return None
        return requested or self.active_adapter

    async def close(self) -> None:  # noqa: B027 - optional hook
        pass
