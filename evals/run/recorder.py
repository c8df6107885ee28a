"""One baseline run: every LLM and tool call goes to the trace store and into the usage counters.

The graph system logs through the agent itself; the three baselines use this so that their
runs are in the same trace store, tagged with the eval id, and count cost the same way.
"""

from __future__ import annotations

import time
import zlib
from typing import TYPE_CHECKING, Any

from deepresearch.agent.config import BudgetSettings
from deepresearch.agent.graph.events import RunFailed, log_event
from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.model.types import Completion, Message, Sampling
from deepresearch.agent.trace.records import LLMCall
from deepresearch.evals.run.results import EvalCitation, StopReason, SystemOutput

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.base import Tool, ToolOutcome


def question_seed(seed: int, question_id: str) -> int:
    """A per-question sampling seed that does not depend on scheduling order."""
    return zlib.crc32(f"{seed}:{question_id}".encode()) & 0x7FFFFFFF


class RunRecorder:
    """Logs one question's calls and keeps the numbers a `SystemOutput` reports."""

    def __init__(
        self, *, store: TraceStore, model: ChatModel, question: str, tags: dict[str, str],
        settings: dict[str, Any], budget: BudgetSettings, policy: RunPolicy,
    ):
        self.store = store
        self.model = model
        self.budget = budget
        self.policy = policy
        self.run_id = store.start_run(question, settings=settings, tags=tags)
        self.started = time.perf_counter()
        self.llm_calls = 0
        self.llm_tokens = 0
        self.completion_tokens = 0
        self.tool_calls = 0
        self.step = 0

    # --- calls ---------------------------------------------------------------------------
    async def chat(
        self, role: str, messages: list[Message], schema: dict[str, Any] | None, sampling: Sampling,
        prompt_version: str | None = None,
    ) -> Completion:
        completion = await self.model.chat(messages, schema=schema, sampling=sampling,
                                           adapter=self.policy.adapter_for(role))
        self.llm_calls += 1
        self.llm_tokens += len(completion.prompt_token_ids) + len(completion.completion_token_ids)
        self.completion_tokens += len(completion.completion_token_ids)
        self.store.log_llm_call(self.run_id, LLMCall(role, [m.model_dump() for m in messages], completion,
                                                     prompt_version, self.step, sampling, schema))
        self.step += 1
        return completion

    async def tool(self, tool: Tool, raw: dict[str, Any]) -> ToolOutcome:
        outcome = await tool.invoke(raw)
        self.tool_calls += 1
        self.store.log_tool_call(self.run_id, outcome, step=self.step)
        self.step += 1
        return outcome

    # --- budget ----------------------------------------------------------------------------
    @property
    def wall_s(self) -> float:
        return time.perf_counter() - self.started

    def out_of_budget(self) -> bool:
        b = self.budget
        return (
            self.tool_calls >= b.max_tool_calls
            or self.llm_tokens >= b.max_llm_tokens
            or self.wall_s >= b.max_wall_s
        )

    # --- end -------------------------------------------------------------------------------
    def finish(
        self, *, answer: str, citations: list[EvalCitation], stop_reason: StopReason,
        evidence: list[str] | None, retrieved_doc_ids: list[str], error: str | None = None,
    ) -> SystemOutput:
        output = SystemOutput(
            answer=answer, citations=citations, retrieved_doc_ids=retrieved_doc_ids, evidence=evidence,
            tool_calls=self.tool_calls, llm_calls=self.llm_calls, llm_tokens=self.llm_tokens,
            completion_tokens=self.completion_tokens, wall_s=self.wall_s, stop_reason=stop_reason,
            error=error, run_id=self.run_id,
        )
        status = "error" if error else stop_reason
        usage = {
            "llm_tokens": self.llm_tokens, "tool_calls": self.tool_calls, "wall_s": output.wall_s,
            "llm_calls": self.llm_calls,
        }
        if error:
            log_event(self.store, self.run_id, RunFailed(error))
        self.store.finish_run(
            self.run_id, status, answer, None, [c.model_dump() for c in citations], usage,
        )
        return output
