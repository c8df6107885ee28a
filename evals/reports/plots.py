"""PNG plots of an eval summary (matplotlib, Agg backend: no display needed).

    metrics.png   quality metrics per system, bars with their bootstrap intervals
    cost.png      F1 against LLM tokens per question, one point per system, both with intervals
    by_type.png   F1 per question type and system, with intervals
    coverage.png  precision against coverage, answers sorted by each system's confidence (when it reports one)
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
import numpy as np  # noqa: E402
from deepresearch.evals.scoring.aggregate import QUALITY_METRICS, EvalSummary, MetricCI  # noqa: E402

_LABELS = {
    "em": "EM", "f1": "F1", "citation_precision": "cit. precision", "citation_recall": "cit. recall",
    "verified_share": "verified", "supported_share": "supported", "found_in_evidence": "in evidence",
    "conversion": "conversion",
}


def _err(cis: list[MetricCI | None]) -> tuple[np.ndarray, np.ndarray]:
    """Bar heights (0 where undefined) and asymmetric error bars."""
    means = np.array([c.mean if c and c.mean is not None else 0.0 for c in cis])
    lows = np.array([c.mean - c.low if c and c.mean is not None else 0.0 for c in cis])
    highs = np.array([c.high - c.mean if c and c.mean is not None else 0.0 for c in cis])
    return means, np.vstack([lows, highs])


def _grouped_bars(ax: plt.Axes, groups: list[str], series: dict[str, list[MetricCI | None]]) -> None:
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for i, (name, cis) in enumerate(series.items()):
        means, err = _err(cis)
        xs = x + (i - (len(series) - 1) / 2) * width
        ax.bar(xs, means, width, yerr=err, capsize=3, label=name)
        for xpos, ci in zip(xs, cis, strict=True):
            if ci is None or ci.mean is None:  # undefined (e.g. no citations): say so, not a zero bar
                ax.text(xpos, 0.01, "n/a", ha="center", va="bottom", fontsize=7, rotation=90, color="grey")
    ax.set_xticks(x, groups, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def plot_metrics(summary: EvalSummary, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(9, 4.5))
    series = {name: [s.metrics[m] for m in QUALITY_METRICS] for name, s in summary.systems.items()}
    _grouped_bars(ax, [_LABELS[m] for m in QUALITY_METRICS], series)
    ax.set_title(f"{summary.eval_id}: quality per system ({round(summary.confidence * 100)} % CI)")
    return _save(fig, path)


def plot_cost(summary: EvalSummary, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    costs = [s.metrics["llm_tokens"].mean for s in summary.systems.values() if s.metrics["llm_tokens"].mean]
    for name, s in summary.systems.items():
        cost, f1 = s.metrics["llm_tokens"], s.metrics["f1"]
        if cost.mean is None or f1.mean is None:
            continue
        ax.errorbar(
            cost.mean, f1.mean, xerr=[[cost.mean - cost.low], [cost.high - cost.mean]],
            yerr=[[f1.mean - f1.low], [f1.high - f1.mean]], fmt="o", capsize=3, label=name,
        )
        ax.annotate(name, (cost.mean, f1.mean), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel("LLM tokens per question (prompt + completion)")
    ax.set_ylabel("F1")
    if costs and max(costs) > 20 * min(costs):  # systems differ by orders of magnitude in cost
        ax.set_xscale("log")
    else:
        ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title("accuracy vs cost")
    return _save(fig, path)


def plot_by_type(summary: EvalSummary, path: Path, metric: str = "f1") -> Path:
    types = sorted({t for s in summary.systems.values() for t in s.by_type})
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(types) + 3), 4.5))
    series = {name: [s.by_type.get(t, {}).get(metric) for t in types] for name, s in summary.systems.items()}
    _grouped_bars(ax, types, series)
    ax.set_title(f"{_LABELS[metric]} by question type")
    return _save(fig, path)


def plot_coverage(summary: EvalSummary, path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for name, s in summary.systems.items():
        if s.curve:
            ax.plot([p.coverage for p in s.curve], [p.precision for p in s.curve], marker="o", label=name)
    ax.set_xlabel("coverage (share of answerable questions answered, surest first)")
    ax.set_ylabel("precision (EM when answered)")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("coverage and precision")
    return _save(fig, path)


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(summary: EvalSummary, out_dir: Path) -> list[Path]:
    paths = [
        plot_metrics(summary, out_dir / "metrics.png"),
        plot_cost(summary, out_dir / "cost.png"),
        plot_by_type(summary, out_dir / "by_type.png"),
    ]
    if any(s.curve for s in summary.systems.values()):
        paths.append(plot_coverage(summary, out_dir / "coverage.png"))
    return paths
