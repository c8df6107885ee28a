"""What every node needs besides the state: the model, the tools, the trace, the settings.

Passed as LangGraph's run-time context, so the graph stays a pure function of its state.
`ask_model` and `use_tool` are the only ways nodes reach the model and the tools: both log to
the trace as the call happens; `record` is the only way they report events (trace and progress).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.model.types import Completion, Sampling
from deepresearch.agent.prompts import Prompt
from deepresearch.agent.trace.records import LLMCall
from deepresearch.agent.trace.store import TraceStore
from deepresearch.tools.base import ToolOutcome
from langgraph.config import get_config, get_stream_writer
from pydantic import BaseModel, ValidationError

from .events import MalformedReply, RunEvent, log_event
from .state import Usage

if TYPE_CHECKING:
    from deepresearch.tools.toolbox import Toolbox

ModelT = TypeVar("ModelT", bound=BaseModel)


class MalformedOutput(RuntimeError):
    """The model's reply did not parse or validate, even after one retry showing it the error."""


@dataclass
class ResearchContext:
    model: ChatModel
    toolbox: Toolbox
    store: TraceStore
    settings: AgentSettings
    run_id: str
    policy: RunPolicy = RunPolicy()
    _calls: dict[str, int] = field(default_factory=dict, repr=False)

    def _sampling(self, role: str, max_tokens: int | None, key: str) -> Sampling:
        """Decoding parameters of one call. Its seed is a function of the run's seed and the call's
        identity (`key`: step, role and, for parallel calls of one step, what they are about), never of
        the order in which parallel executors happen to reach the model: the same question and seed
        draw the same seed for every call."""
        cap = self.policy.max_tokens
        seed = None if self.policy.seed is None else call_seed(self.policy.seed, key)
        return Sampling(temperature=self.policy.temperature_for(role), max_tokens=min(max_tokens or cap, cap),
                        seed=seed)

    async def ask_model(
        self, prompt: Prompt, out_type: type[ModelT], schema: dict[str, Any], *, step: str | None = None,
        max_tokens: int | None = None, about: str = "", **values: object,
    ) -> tuple[ModelT, Usage]:
        """One structured LLM call, logged; a malformed reply is retried once with the error shown.
        `about` tells apart calls of one step that run in parallel (e.g. the source an extractor reads)."""
        messages = prompt.messages(**values)
        usage: Usage = {"llm_tokens": 0, "llm_calls": 0, "tool_calls": 0}
        identity = f"{step}|{prompt.role}|{about}"
        for attempt in range(2):
            sampling = self._sampling(prompt.role, max_tokens, self._next_key(identity, attempt))
            completion = await self.model.chat(messages, schema=schema, sampling=sampling,
                                               adapter=self.policy.adapter_for(prompt.role))
            self.store.log_llm_call(self.run_id, LLMCall(prompt.role, messages, completion, prompt.version, step,
                                                         sampling, schema), task=current_task())
            usage["llm_tokens"] += len(completion.prompt_token_ids) + len(completion.completion_token_ids)
            usage["llm_calls"] += 1
            try:
                return _parse(completion, out_type, schema), usage
            except ValueError as exc:
                error = str(exc)
                self.record(MalformedReply(role=prompt.role, step=step, attempt=attempt + 1, error=error))
                messages = [*messages, {"role": "assistant", "content": completion.text},
                            {"role": "user", "content": f"That reply was invalid: {error}. "
                                                        "Reply again with JSON that matches the schema."}]
        raise MalformedOutput(f"{prompt.role}: {error}")

    def _next_key(self, identity: str, attempt: int) -> str:
        if attempt == 0:  # the n-th call with this identity (sequential within one step and role)
            self._calls[identity] = self._calls.get(identity, 0) + 1
        return f"{identity}#{self._calls[identity]}/{attempt}"

    def record(self, event: RunEvent) -> None:
        """The one way nodes report what happened: kept in the trace and/or shown as progress, as the
        event's type says (events.py)."""
        log_event(self.store, self.run_id, event, current_task())
        if event.streamed:
            get_stream_writer()(event)

    async def use_tool(self, name: str, raw: dict[str, Any], *, step: str | None = None) -> ToolOutcome:
        outcome = await self.toolbox.invoke(name, raw)
        self.store.log_tool_call(self.run_id, outcome, step=step, task=current_task())
        return outcome


def current_task() -> str | None:
    """The id of the graph task (one node run) making a call, logged with it. A resume re-runs a task cut
    short under the same id, which is how its earlier events are found and set aside (run.py)."""
    try:
        return get_config()["configurable"].get("__pregel_task_id")
    except (RuntimeError, KeyError):  # outside a graph run
        return None


def call_seed(run_seed: int, key: str) -> int:
    """A 31-bit seed for one call, stable across processes (unlike hash())."""
    digest = hashlib.sha256(f"{run_seed}|{key}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _parse(completion: Completion, out_type: type[ModelT], schema: dict[str, Any]) -> ModelT:
    value = completion.parsed
    if value is None:
        try:
            value = json.loads(completion.text)
        except json.JSONDecodeError as exc:
            cut = " (reply cut at the token limit)" if completion.finish_reason == "length" else ""
            raise ValueError(f"not valid JSON: {exc.msg} at char {exc.pos}{cut}") from None
    try:
        parsed = out_type.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{'.'.join(map(str, first['loc'])) or 'reply'}: {first['msg']}") from None
    _check_enums(value, schema)
    return parsed


def _check_enums(value: Any, schema: dict[str, Any], path: str = "") -> None:
    """Enforce the schema's enums ourselves: a server may ignore the grammar (unknown tool, bad cite)."""
    if "enum" in schema and value not in schema["enum"]:
        shown = ", ".join(map(str, schema["enum"][:8]))
        raise ValueError(f"{path or 'value'}: {str(value)[:60]!r} is not one of: {shown}")
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                _check_enums(value[key], sub, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _check_enums(item, schema["items"], f"{path}[{i}]")
