"""Records that cross the model-runtime boundary: what a role asks for and what it gets back.

Both backends (embedded transformers engine, vLLM/OpenAI-compatible client) return the same
`Completion`, token-exact, so the trace store and the trainer never re-tokenise text.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Role = Literal["system", "user", "assistant", "tool"]


class Message(BaseModel):
    role: Role
    content: str


class Sampling(BaseModel):
    """Decoding parameters. Greedy when temperature == 0."""

    temperature: float = Field(0.0, ge=0.0, le=5.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(256, ge=1, le=32768)
    seed: int | None = None
    stop: list[str] = Field(default_factory=list)


class Timings(BaseModel):
    queued_s: float = 0.0  # waiting for a batch slot
    prefill_s: float = 0.0
    decode_s: float = 0.0
    total_s: float = 0.0
    # Forward passes that drew this call's tokens, the prefill's included: emitted tokens ÷ passes above 1 is what
    # jump-forward drafts saved (0: not counted, e.g. vLLM or a reused greedy result).
    forward_passes: int = 0


class Completion(BaseModel):
    text: str
    parsed: Any | None = None  # the JSON value when a schema was given and the text parsed
    prompt_token_ids: list[int]
    completion_token_ids: list[int]
    logprobs: list[float]  # one per completion token, under the sampling distribution's logits
    # Indices into completion_token_ids that the grammar forced (jump-forward): appended without a
    # choice, logged with logprob 0.0, so the trainer can leave them out. Empty in traces from before.
    forced_positions: list[int] = Field(default_factory=list)
    # Indices drawn from the engine's closing tiers near max_tokens (a narrower mask than the grammar's):
    # the trainer narrows its mask there too, to compare with the same distribution. Empty from vLLM.
    narrowed_positions: list[int] = Field(default_factory=list)
    model: str
    adapter: str | None = None
    finish_reason: Literal["stop", "length", "error"] = "stop"
    timings: Timings = Field(default_factory=Timings)

    @property
    def usage(self) -> dict[str, int]:
        return {"prompt_tokens": len(self.prompt_token_ids), "completion_tokens": len(self.completion_token_ids)}


class ChatRequest(BaseModel):
    messages: list[Message]
    json_schema: dict[str, Any] | None = None
    sampling: Sampling = Field(default_factory=Sampling)
    adapter: str | None = None  # None = the model's active adapter (or the base model); "" = the base model
