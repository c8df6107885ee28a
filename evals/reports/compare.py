"""Compare two evals (e.g. base model vs a new adapter) on the questions both answered.

For each system in both: every metric's difference B − A with a paired bootstrap interval
(the same questions resampled together), EM's difference on each source dataset and question type
(a slice a trainer never saw is one of them), and the questions whose exact match flipped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from deepresearch.evals.reports.report import METRIC_LABELS, load_results
from deepresearch.evals.run.results import QuestionResult
from deepresearch.evals.scoring.aggregate import METRICS, MetricCI
from deepresearch.evals.scoring.metrics import paired_bootstrap_diff
from pydantic import BaseModel


class Flip(BaseModel):
    question_id: str
    question: str
    gold: str
    answer_a: str
    answer_b: str
    em_a: float
    em_b: float
    f1_a: float
    f1_b: float

    @property
    def fixed(self) -> bool:
        """Wrong in A, right in B (else: right in A, wrong in B)."""
        return self.em_b > self.em_a


class MetricDiff(BaseModel):
    a: float | None
    b: float | None
    diff: MetricCI  # B − A


class SliceDiff(BaseModel):
    n: int
    em: MetricDiff


class SystemComparison(BaseModel):
    n_common: int
    only_a: int
    only_b: int
    metrics: dict[str, MetricDiff]
    flips: list[Flip]
    by_source: dict[str, SliceDiff] = {}  # EM per source dataset (empty when there is only one)
    by_type: dict[str, SliceDiff] = {}  # EM per question type (likewise)


class Comparison(BaseModel):
    a: str
    b: str
    confidence: float
    systems: dict[str, SystemComparison]


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def compare_results(
    a: list[QuestionResult], b: list[QuestionResult], *, seed: int = 0, resamples: int = 1000,
    confidence: float = 0.95,
) -> dict[str, SystemComparison]:
    """Paired comparison per system present in both result lists."""
    index_a = {r.key: r for r in a}
    index_b = {r.key: r for r in b}
    systems = [s for s in dict.fromkeys(r.system for r in a) if any(r.system == s for r in b)]
    out: dict[str, SystemComparison] = {}
    for system in systems:
        ids_a = {q for s, q in index_a if s == system}
        ids_b = {q for s, q in index_b if s == system}
        common = sorted(ids_a & ids_b)
        pairs = [(index_a[(system, q)], index_b[(system, q)]) for q in common]
        boot = {"seed": seed, "resamples": resamples, "confidence": confidence}
        metrics = {name: _metric_diff(fn, pairs, **boot) for name, fn in METRICS.items()}
        by_source = _em_by_slice(pairs, lambda r: r.source, boot)
        by_type = _em_by_slice(pairs, lambda r: r.qtype, boot)
        flips = [
            Flip(
                question_id=x.question_id, question=x.question, gold=x.gold[0], answer_a=x.output.answer,
                answer_b=y.output.answer, em_a=x.scores.em, em_b=y.scores.em, f1_a=x.scores.f1,
                f1_b=y.scores.f1,
            )
            for x, y in pairs if x.scores.em != y.scores.em
        ]
        out[system] = SystemComparison(
            n_common=len(common), only_a=len(ids_a - ids_b), only_b=len(ids_b - ids_a), metrics=metrics, flips=flips,
            by_source=by_source, by_type=by_type,
        )
    return out


Pair = tuple[QuestionResult, QuestionResult]


def _metric_diff(fn: Callable[[QuestionResult], float | None], pairs: list[Pair], *, seed: int, resamples: int,
                 confidence: float) -> MetricDiff:
    va, vb = [fn(x) for x, _ in pairs], [fn(y) for _, y in pairs]
    ci = paired_bootstrap_diff(va, vb, seed=seed, resamples=resamples, confidence=confidence)
    diff = MetricCI(mean=ci.mean, low=ci.low, high=ci.high, n=ci.n) if ci.n else MetricCI(
        mean=None, low=None, high=None, n=0)
    return MetricDiff(a=_mean(va), b=_mean(vb), diff=diff)


def _em_by_slice(pairs: list[Pair], key: Callable[[QuestionResult], str | None], boot: dict) -> dict[str, SliceDiff]:
    """EM's paired difference per group of a question's source or type, in name order; none when there is
    one group (it would repeat the EM row)."""
    groups: dict[str, list[Pair]] = {}
    for pair in pairs:
        groups.setdefault(key(pair[0]) or "unknown", []).append(pair)
    if len(groups) < 2:
        return {}
    return {name: SliceDiff(n=len(chosen), em=_metric_diff(METRICS["em"], chosen, **boot))
            for name, chosen in sorted(groups.items())}


def _only_system(rows: list[QuestionResult], system: str, label: str, path: Path) -> list[QuestionResult]:
    kept = [r.model_copy(update={"system": label}) for r in rows if r.system == system]
    if not kept:
        raise ValueError(f"{path}: no results of system '{system}'")
    return kept


def compare_dirs(
    dir_a: Path, dir_b: Path, *, seed: int = 0, resamples: int = 1000, confidence: float = 0.95,
    systems: tuple[str, str] | None = None,
) -> Comparison:
    """`systems` = (system in A, system in B): compare two systems (e.g. closed-book vs graph, in the
    same directory or two), paired by question; otherwise each system present in both."""
    a, b = load_results(dir_a), load_results(dir_b)
    for path, rows in ((dir_a, a), (dir_b, b)):
        if not rows:
            raise ValueError(f"{path}: no results (is it an eval --out directory?)")
    if systems is not None:
        label = f"{systems[0]} (A) vs {systems[1]} (B)"
        a, b = _only_system(a, systems[0], label, dir_a), _only_system(b, systems[1], label, dir_b)
    compared = compare_results(a, b, seed=seed, resamples=resamples, confidence=confidence)
    if not compared:
        raise ValueError(f"{dir_a} and {dir_b} have no system in common")
    return Comparison(a=str(dir_a), b=str(dir_b), confidence=confidence, systems=compared)


def _signed(ci: MetricCI) -> str:
    if ci.mean is None:
        return "–"
    marker = " *" if ci.low is not None and (ci.low > 0 or ci.high < 0) else ""
    return f"{ci.mean:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}]{marker}"


def _value(mean: float | None) -> str:
    return "–" if mean is None else f"{mean:.3f}"


def render_comparison(comparison: Comparison, max_flips: int = 30) -> str:
    pct = round(comparison.confidence * 100)
    lines = [f"# Compare A = `{comparison.a}` vs B = `{comparison.b}`", ""]
    for system, comp in comparison.systems.items():
        lines += [
            f"## {system} — {comp.n_common} common questions"
            + (f" ({comp.only_a} only in A, {comp.only_b} only in B)" if comp.only_a or comp.only_b else ""),
            "", f"| metric | A | B | B − A [{pct} % paired CI] |", "|---|---|---|---|",
        ]
        for name, m in comp.metrics.items():
            lines.append(f"| {METRIC_LABELS[name]} | {_value(m.a)} | {_value(m.b)} | {_signed(m.diff)} |")
        for title, slices in (("source", comp.by_source), ("type", comp.by_type)):
            if slices:
                lines += ["", f"| EM by {title} | n | A | B | B − A [{pct} % paired CI] |", "|---|---|---|---|---|"]
                lines += [f"| {name} | {d.n} | {_value(d.em.a)} | {_value(d.em.b)} | {_signed(d.em.diff)} |"
                          for name, d in slices.items()]
        fixed = [f for f in comp.flips if f.fixed]
        broken = [f for f in comp.flips if not f.fixed]
        lines += ["", f"EM flips: {len(fixed)} fixed (wrong in A, right in B), {len(broken)} broken.", ""]
        if comp.flips:
            lines += ["| | question | gold | A | B |", "|---|---|---|---|---|"]
            for f in (fixed + broken)[:max_flips]:
                mark = "fixed" if f.fixed else "broken"
                cells = [mark, f.question, f.gold, f.answer_a, f.answer_b]
                lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        lines.append("")
    lines.append("`*`: the interval excludes 0.")
    return "\n".join(lines) + "\n"
