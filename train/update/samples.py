"""Training samples straight from the trace: every LLM call of a scored run becomes one sample.

A sample is the exact token ids the model saw (prompt) and produced (completion), with the per-token
logprobs the sampler logged. Nothing is re-tokenised: chat templates, tool outputs pasted into the
prompt and grammar-forced tokens are all exactly what the model conditioned on when it acted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field, model_validator

LLM_EVENT = "llm"  # TraceStore.log_llm_call's event kind


class TrainingSample(BaseModel):
    sample_id: str = Field(description="run_id:seq of the LLM event")
    run_id: str
    group_id: str
    role: str
    prompt_ids: list[int]
    completion_ids: list[int]
    sampling_logprobs: list[float]
    forced_positions: list[int] = Field(
        default_factory=list, description="completion indices the grammar forced (jump-forward): no decision"
    )
    narrowed_positions: list[int] = Field(
        default_factory=list, description="completion indices drawn from the engine's closing tiers"
    )
    json_schema: dict[str, Any] | None = Field(
        None, description="the JSON schema the completion was constrained by (None: free text, or an old trace)"
    )
    advantage: float = 0.0
    weight: float = Field(1.0, ge=0.0, description="per-role loss weight")
    truncated: bool = Field(False, description="finish_reason == 'length'")

    @model_validator(mode="after")
    def _aligned(self) -> TrainingSample:
        if len(self.completion_ids) != len(self.sampling_logprobs):
            raise ValueError(
                f"{self.sample_id}: {len(self.completion_ids)} completion tokens but "
                f"{len(self.sampling_logprobs)} logprobs"
            )
        return self

    @property
    def n_tokens(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)


class SkippedCall(BaseModel):
    sample_id: str
    reason: str


def samples_from_events(
    run_id: str,
    group_id: str,
    events: Iterable[Any],
    advantage: float,
    role_weights: Mapping[str, float] | None = None,
) -> tuple[list[TrainingSample], list[SkippedCall]]:
    """One sample per logged LLM call of a run, each carrying the run's advantage.

    `events` are TraceEvents (or dicts with kind/seq/payload). Calls that cannot be trained on are
    returned as SkippedCall with the reason: errors, empty completions, missing logprobs.
    """
    weights = role_weights or {}
    samples: list[TrainingSample] = []
    skipped: list[SkippedCall] = []
    for event in events:
        kind, seq, payload = _fields(event)
        if kind != LLM_EVENT:
            continue
        sid = f"{run_id}:{seq}"
        reason = _unusable(payload)
        if reason:
            skipped.append(SkippedCall(sample_id=sid, reason=reason))
            continue
        role = str(payload.get("role") or "unknown")
        samples.append(
            TrainingSample(
                sample_id=sid, run_id=run_id, group_id=group_id, role=role,
                prompt_ids=list(payload["prompt_token_ids"]),
                completion_ids=list(payload["completion_token_ids"]),
                sampling_logprobs=[float(x) for x in payload["logprobs"]],
                forced_positions=list(payload.get("forced_positions") or []),  # absent in older traces
                narrowed_positions=list(payload.get("narrowed_positions") or []),
                json_schema=payload.get("schema"),
                advantage=float(advantage),
                weight=float(weights.get(role, 1.0)),
                truncated=payload.get("finish_reason") == "length",
            )
        )
    return samples, skipped


def _fields(event: Any) -> tuple[str, int, dict[str, Any]]:
    if isinstance(event, Mapping):
        return event["kind"], int(event["seq"]), event["payload"]
    return event.kind, int(event.seq), event.payload


def _unusable(payload: Mapping[str, Any]) -> str | None:
    if payload.get("finish_reason") == "error":
        return "the call failed"
    completion = payload.get("completion_token_ids") or []
    if not completion:
        return "empty completion"
    if not payload.get("prompt_token_ids"):
        return "no prompt token ids"
    logprobs = payload.get("logprobs")
    if logprobs is None or len(logprobs) != len(completion):
        return "logprobs missing or not one per completion token"
    return None
