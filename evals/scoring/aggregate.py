"""Per-question results → per-system metrics with bootstrap intervals, and breakdowns.

`summarize` is what `run_eval` returns and what reports and the trainer's gate read:
`summary.systems["graph"].metrics["f1"].mean` (and `.low`, `.high`, `.n`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deepresearch.evals.run.results import QuestionResult
from deepresearch.evals.scoring.calibration import CurvePoint, coverage_precision
from deepresearch.evals.scoring.metrics import bootstrap_ci
from pydantic import BaseModel, Field

Extractor = Callable[[QuestionResult], float | None]

# Quality metrics (higher is better), then cost and failure rates. Order = report order.
METRICS: dict[str, Extractor] = {
    "em": lambda r: r.scores.em,
    "f1": lambda r: r.scores.f1,
    "citation_precision": lambda r: r.scores.citation_precision,
    "citation_recall": lambda r: r.scores.citation_recall,
    "verified_share": lambda r: r.scores.verified_share,
    "supported_share": lambda r: r.scores.supported_share,
    "found_in_evidence": lambda r: r.scores.found_in_evidence,
    "offered": lambda r: r.scores.offered,
    "among_candidates": lambda r: r.scores.among_candidates,
    # Of the runs whose evidence held the answer, the share answered exactly: how well evidence becomes answers.
    "conversion": lambda r: r.scores.em if r.scores.found_in_evidence == 1.0 else None,
    "leakage": lambda r: None if r.output.leaked is None else float(r.output.leaked),
    # Trust: how much it answers, how often it is right when it does, and how it treats what cannot be answered.
    "answered": lambda r: r.scores.answered,
    "precision_answered": lambda r: r.scores.em if r.scores.answered and not r.unanswerable else None,
    "abstained_answerable": lambda r: None if r.unanswerable else 1.0 - r.scores.answered,
    "not_found_unanswerable": lambda r: 1.0 - r.scores.answered if r.unanswerable else None,
    "wrong_verified": lambda r: r.scores.wrong_verified,
    # Reports with sections (open questions): sentences shown with a supported citation, supported citations per
    # report, sentences the check removed, and an LLM judge's score where eval.judge is on.
    "report_supported_share": lambda r: r.scores.report_supported_share,
    "report_supported_citations": lambda r: r.scores.report_supported_citations,
    "report_dropped": lambda r: r.scores.report_dropped,
    "report_judge": lambda r: r.scores.report_judge,
    "tool_calls": lambda r: float(r.output.tool_calls),
    "llm_tokens": lambda r: float(r.output.llm_tokens),
    "wall_s": lambda r: r.output.wall_s,
    "budget_stop": lambda r: float(r.output.stop_reason == "budget_stop"),
    "loop_stop": lambda r: float(r.output.stop_reason == "loop_stop"),
    "error": lambda r: float(r.output.error is not None),
}
QUALITY_METRICS = ("em", "f1", "citation_precision", "citation_recall", "verified_share", "supported_share",
                   "found_in_evidence", "conversion")
BREAKDOWN_METRICS = ("em", "f1")


class MetricCI(BaseModel):
    mean: float | None  # None when no question had a value (JSON has no NaN)
    low: float | None
    high: float | None
    n: int


class SystemSummary(BaseModel):
    n: int
    metrics: dict[str, MetricCI]
    # Answers sorted by the system's own confidence: precision at each coverage (empty: no confidence recorded).
    curve: list[CurvePoint] = Field(default_factory=list)
    by_type: dict[str, dict[str, MetricCI]] = Field(default_factory=dict)
    by_source: dict[str, dict[str, MetricCI]] = Field(default_factory=dict)


class EvalSummary(BaseModel):
    eval_id: str
    seed: int
    confidence: float
    systems: dict[str, SystemSummary]

    def metric(self, system: str, name: str) -> MetricCI:
        return self.systems[system].metrics[name]


def _ci(values: list[float | None], seed: int, resamples: int, confidence: float) -> MetricCI:
    interval = bootstrap_ci(values, seed=seed, resamples=resamples, confidence=confidence)
    if interval.n == 0:
        return MetricCI(mean=None, low=None, high=None, n=0)
    return MetricCI(mean=interval.mean, low=interval.low, high=interval.high, n=interval.n)


def _group(
    results: list[QuestionResult], key: Callable[[QuestionResult], str | None], **ci: Any
) -> dict[str, dict[str, MetricCI]]:
    groups: dict[str, list[QuestionResult]] = {}
    for r in results:
        groups.setdefault(key(r) or "unknown", []).append(r)
    return {
        name: {m: _ci([METRICS[m](r) for r in rows], **ci) for m in BREAKDOWN_METRICS}
        for name, rows in sorted(groups.items())
    }


def summarize(
    results: list[QuestionResult], *, eval_id: str, seed: int = 0, resamples: int = 1000, confidence: float = 0.95,
) -> EvalSummary:
    """Aggregate results per system (in first-seen order), each metric with its interval."""
    by_system: dict[str, list[QuestionResult]] = {}
    for r in results:
        by_system.setdefault(r.system, []).append(r)
    ci = {"seed": seed, "resamples": resamples, "confidence": confidence}
    systems = {
        name: SystemSummary(
            n=len(rows),
            metrics={m: _ci([fn(r) for r in rows], **ci) for m, fn in METRICS.items()},
            by_type=_group(rows, lambda r: r.qtype, **ci),
            by_source=_group(rows, lambda r: r.source, **ci),
            curve=coverage_precision(rows),
        )
        for name, rows in by_system.items()
    }
    return EvalSummary(eval_id=eval_id, seed=seed, confidence=confidence, systems=systems)
