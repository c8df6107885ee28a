"""Settings the evals layer defines for itself; app/ fills them in and passes them down."""

from __future__ import annotations

from pydantic import BaseModel, Field


class EvalSettings(BaseModel):
    concurrency: int = Field(
        8, ge=1, le=256, description="questions answered at once (the model batches them; match model.max_batch)"
    )
    seed: int = Field(0, description="question order, sampling seeds and bootstrap resampling")
    retrieve_k: int = Field(5, ge=1, le=50, description="retrieve-then-answer: passages put in the prompt")
    loop_max_turns: int = Field(
        4, ge=1, le=50, description="agent-loop: search/open actions before it must answer (budget also applies)"
    )
    answer_max_tokens: int = Field(64, ge=8, le=4096, description="completion cap of a baseline's answer call")
    use_memory: bool = Field(
        False, description="let the graph remember/recall across questions (off: no answers leak between them)"
    )
    judge: bool = Field(
        False, description="score each graph run's sectioned report 0-10 with the eval's own model as the judge (as "
        "the trainer's judge reward uses its policy model): worth it on a served model; off: no judge score"
    )
    bootstrap_resamples: int = Field(1000, ge=100, le=100_000)
    confidence: float = Field(0.95, gt=0.5, lt=1.0)
