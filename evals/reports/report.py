"""An eval directory → summary.json, report.md and PNG plots.

`write_report(out_dir)` reads results.jsonl and manifest.json (so it also rebuilds the report
of a finished or interrupted eval) and returns the paths it wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.evals.config import EvalSettings
from deepresearch.evals.run.manifest import load_manifest
from deepresearch.evals.run.results import QuestionResult
from deepresearch.evals.run.results_file import ResultsFile
from deepresearch.evals.scoring.aggregate import METRICS, EvalSummary, MetricCI, summarize
from pydantic import BaseModel

REPORT_FILE = "report.md"
SUMMARY_FILE = "summary.json"

METRIC_LABELS = {
    "em": "EM", "f1": "F1", "citation_precision": "citation precision", "citation_recall": "citation recall",
    "verified_share": "citations verified", "supported_share": "claim-supported citations",
    "found_in_evidence": "answer in evidence", "offered": "answer among the writer's options",
    "among_candidates": "answer among the re-ranker's candidates",
    "conversion": "conversion (EM when in evidence)",
    "leakage": "few-shot leakage",
    "answered": "answered (not \"not found\")", "precision_answered": "precision when answered (EM)",
    "abstained_answerable": "\"not found\" on answerable", "not_found_unanswerable": "\"not found\" on unanswerable",
    "wrong_verified": "wrong answer shown with a verified citation",
    "report_supported_share": "report sentences with a supported citation",
    "report_supported_citations": "supported citations / report", "report_dropped": "report sentences removed",
    "report_judge": "report judge score (0-1)",
    "tool_calls": "tool calls / q", "llm_tokens": "LLM tokens / q", "wall_s": "wall s / q",
    "budget_stop": "budget stops", "loop_stop": "loop stops", "error": "errors",
}


class ReportPaths(BaseModel):
    summary: Path
    markdown: Path
    plots: list[Path]


# Decimals per metric: shares get 3, counts and seconds fewer.
DIGITS = {"tool_calls": 1, "llm_tokens": 0, "wall_s": 2, "report_supported_citations": 1, "report_dropped": 1}


def format_ci(ci: MetricCI, digits: int = 3) -> str:
    if ci.mean is None:
        return "–"
    return f"{ci.mean:,.{digits}f} [{ci.low:,.{digits}f}, {ci.high:,.{digits}f}]"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _breakdown(summary: EvalSummary, attr: str, metric: str) -> list[str]:
    systems = list(summary.systems)
    groups = sorted({g for s in summary.systems.values() for g in getattr(s, attr)})
    rows = []
    for group in groups:
        cells = []
        for name in systems:
            ci = getattr(summary.systems[name], attr).get(group, {}).get(metric)
            cells.append(f"{format_ci(ci)} (n={ci.n})" if ci else "–")
        rows.append([group, *cells])
    return _table([attr.removeprefix("by_"), *systems], rows)


def render_markdown(summary: EvalSummary, header_lines: list[str], plots: list[Path]) -> str:
    systems = list(summary.systems)
    pct = round(summary.confidence * 100)
    lines = [f"# Eval {summary.eval_id}", "", *header_lines, ""]
    lines += [f"## Metrics (mean [{pct} % bootstrap CI], per question)", ""]
    rows = [["questions", *(str(summary.systems[s].n) for s in systems)]]
    for metric in METRICS:
        digits = DIGITS.get(metric, 3)
        rows.append([METRIC_LABELS[metric], *(format_ci(summary.metric(s, metric), digits) for s in systems)])
    lines += _table(["metric", *systems], rows)
    lines += _curves(summary)
    for attr in ("by_type", "by_source"):
        for metric in ("em", "f1"):
            lines += ["", f"## {METRIC_LABELS[metric]} by {attr.removeprefix('by_')}", ""]
            lines += _breakdown(summary, attr, metric)
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    return "\n".join(lines) + "\n"


def _curves(summary: EvalSummary) -> list[str]:
    """Per system with a recorded confidence: precision as the least confident answers are left out."""
    lines: list[str] = []
    for name, system in summary.systems.items():
        if not system.curve:
            continue
        lines += ["", f"## Coverage and precision: {name} (answers sorted by its confidence)", ""]
        lines += _table(["coverage", "answered", "precision", "right answers kept", "confidence ≥"], [
            [f"{p.coverage:.2f}", str(p.answered), f"{p.precision:.3f}", f"{p.right_kept:.3f}", f"{p.threshold:.3f}"]
            for p in system.curve])
    return lines


def _header(out_dir: Path) -> list[str]:
    manifest = load_manifest(out_dir)
    if manifest is None:
        return [f"Results in `{out_dir}`."]
    return [
        f"- questions: `{manifest.questions_path}` (split {manifest.split or 'all'}, "
        f"limit {manifest.limit if manifest.limit is not None else 'none'}, seed {manifest.seed})",
        f"- corpus: `{manifest.corpus_path or '–'}`",
        f"- model: {manifest.model}, adapter: {manifest.adapter or 'base'}, temperature {manifest.temperature}",
        f"- started: {manifest.created_at}",
        *([f"- agent settings changed: {', '.join(f'{k} = {v}' for k, v in manifest.agent_changes.items())}"]
          if manifest.agent_changes else []),
    ]


def load_results(out_dir: Path) -> list[QuestionResult]:
    """Results of the directory's current selection (all of results.jsonl when there is no manifest)."""
    results = ResultsFile(out_dir).load()
    manifest = load_manifest(out_dir)
    if manifest is not None and manifest.question_ids:
        wanted = set(manifest.question_ids)
        results = [r for r in results if r.question_id in wanted]
    return results


def summarize_dir(out_dir: Path, settings: EvalSettings | None = None) -> EvalSummary:
    """Summarise every system in `out_dir` (current selection) and write summary.json."""
    settings = settings or EvalSettings()
    results = load_results(out_dir)
    if not results:
        raise ValueError(f"{out_dir}: no results yet (results.jsonl is missing or empty)")
    manifest = load_manifest(out_dir)
    summary = summarize(
        results, eval_id=manifest.eval_id if manifest else out_dir.name, seed=settings.seed,
        resamples=settings.bootstrap_resamples, confidence=settings.confidence,
    )
    (out_dir / SUMMARY_FILE).write_text(json.dumps(summary.model_dump(mode="json"), indent=2), encoding="utf-8")
    return summary


def write_report(out_dir: Path, settings: EvalSettings | None = None, plots: bool = True) -> ReportPaths:
    """Write summary.json, report.md and (unless `plots` is False) the PNG plots of `out_dir`."""
    summary = summarize_dir(out_dir, settings)
    plot_paths: list[Path] = []
    if plots:
        from deepresearch.evals.reports.plots import write_plots  # matplotlib only when plots are wanted

        plot_paths = write_plots(summary, out_dir)
    markdown_path = out_dir / REPORT_FILE
    markdown_path.write_text(render_markdown(summary, _header(out_dir), plot_paths), encoding="utf-8")
    return ReportPaths(summary=out_dir / SUMMARY_FILE, markdown=markdown_path, plots=plot_paths)
