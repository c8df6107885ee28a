"""Publishing: a candidate adapter is evaluated on the dev set and served only if it does not regress.

The gate runs the evals runner (the same code as `deepresearch eval`; its graph system runs each question
through evals/run/scored_run.py, the run-and-score path rollouts and the learning demo use too) on the dev
questions with the candidate and with what is served now (base model or current adapter), on the same
questions and seeds, and compares one metric's mean. The eval directories are keyed by adapter and seed, and the
runner resumes from them, so the baseline is evaluated once, not once per round.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .registry import AdapterRegistry

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.model.policy import AdapterChoice
    from deepresearch.evals.run.runner import EvalRuntime

GATE_SYSTEM = "graph"


class DevSet(BaseModel):
    questions: Path
    corpus: Path
    split: str | None = "dev"
    limit: int | None = 16
    seeds: list[int] = [0]
    metric: str = "f1"
    tolerance: float = 0.0


class GateResult(BaseModel):
    candidate: str
    baseline: str | None
    metric: str
    candidate_score: float | None
    baseline_score: float | None
    per_seed: dict[str, dict[str, float | None]]
    passed: bool

    def line(self) -> str:
        verdict = "passed" if self.passed else "REGRESSED"
        fmt = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
        return (f"eval gate {verdict}: {self.metric} {fmt(self.candidate_score)} ({self.candidate}) vs "
                f"{fmt(self.baseline_score)} ({self.baseline or 'base model'})")


def eval_dir(root: Path, dev: DevSet, adapter: str | None, seed: int, stamp: str = "") -> Path:
    """Results are reused only for the same dev set and the same adapter weights (names can be reused
    after adapters are deleted, so the adapter's creation time is part of the key)."""
    key = hashlib.sha1(f"{dev.model_dump_json()}|{stamp}".encode()).hexdigest()[:10]
    return Path(root) / f"{adapter or 'base'}-{key}" / f"seed-{seed}"


@dataclass(frozen=True)
class GateRun:
    """Where and how the gate evaluates: the eval runtime (its eval settings are set per seed), the root
    of the eval directories, and how both sides decode."""

    runtime: EvalRuntime
    out_root: Path
    temperature: float = 0.0
    max_tokens: int = 384
    progress: bool = False


async def evaluate_adapter(
    adapter: AdapterChoice, dev: DevSet, gate: GateRun, stamp: str = "",
) -> dict[int, float | None]:
    """The dev metric of one adapter per seed, through the evals runner."""
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.evals.config import EvalSettings
    from deepresearch.evals.run.runner import EvalSelection, run_eval

    policy = RunPolicy(adapter=adapter, temperature=gate.temperature, max_tokens=gate.max_tokens)
    selection = EvalSelection(questions=dev.questions, corpus=dev.corpus, split=dev.split, limit=dev.limit)
    scores: dict[int, float | None] = {}
    for seed in dev.seeds:
        summary = await run_eval(
            selection, replace(gate.runtime, evals=EvalSettings(seed=seed)), systems=[GATE_SYSTEM],
            out_dir=eval_dir(gate.out_root, dev, adapter.label, seed, stamp), policy=policy, progress=gate.progress,
        )
        scores[seed] = summary.metric(GATE_SYSTEM, dev.metric).mean
    return scores


async def eval_gate(
    candidate: str, baseline: str | None, dev: DevSet, registry: AdapterRegistry, gate: GateRun,
) -> GateResult:
    """Passes when mean(candidate) ≥ mean(baseline) − tolerance over the seeds. Each adapter answers for the
    roles it was trained for; baseline None is what the model serves."""
    def stamp(name: str | None) -> str:
        return str(registry.metadata(name).get("created_at", "")) if name else ""

    cand = await evaluate_adapter(registry.choice(candidate), dev, gate, stamp(candidate))
    base = await evaluate_adapter(registry.choice(baseline), dev, gate, stamp(baseline))
    return gate_verdict(candidate, baseline, dev, cand, base)


def gate_verdict(candidate: str, baseline: str | None, dev: DevSet, cand: dict[int, float | None],
                 base: dict[int, float | None]) -> GateResult:
    """Mean over seeds of each side; no candidate score fails, no baseline score passes."""
    c_vals = [v for v in cand.values() if v is not None]
    b_vals = [v for v in base.values() if v is not None]
    c_score = mean(c_vals) if c_vals else None
    b_score = mean(b_vals) if b_vals else None
    passed = c_score is not None and (b_score is None or c_score >= b_score - dev.tolerance)
    return GateResult(
        candidate=candidate, baseline=baseline, metric=dev.metric, candidate_score=c_score, baseline_score=b_score,
        per_seed={str(s): {"candidate": cand.get(s), "baseline": base.get(s)} for s in dev.seeds}, passed=passed,
    )


async def serve_adapter(
    name: str | None, registry: AdapterRegistry, models: list[ChatModel], activate: bool = True
) -> None:
    """Load `name` into every given model (the embedded engine or a vLLM server) and, with `activate`,
    make it what requests that name no adapter get."""
    for model in models:
        if name is not None and name not in model.adapters():
            await model.load_adapter(name, registry.path(name))
        if activate:
            model.active_adapter = name


async def publish(
    name: str, registry: AdapterRegistry, models: list[ChatModel], gate: GateResult | None, activate: bool = True,
) -> bool:
    """Serve the candidate if the gate passed (or there is no gate); record the verdict either way.
    Other processes pick the registry's current adapter up by name (vLLM) or at start (embedded)."""
    if gate is not None:
        registry.update_metadata(name, eval=gate.model_dump(mode="json"))
        if not gate.passed:
            return False
    await serve_adapter(name, registry, models, activate=activate)
    registry.set_current(name, action="publish")
    return True
