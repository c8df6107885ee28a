"""Answer and citation metrics, shared by the eval runner and the trainer's rewards.

Public API (kept small on purpose; the trainer imports it):

    normalize_answer(text) -> str                      SQuAD normalisation
    is_yes_no(golds, flag=False) -> bool               yes/no questions count by EM only
    exact_match(pred, golds, yes_no=None) -> float     1.0 / 0.0, max over gold + aliases
    f1(pred, golds, yes_no=None) -> float              token F1, max over gold + aliases (EM for yes/no)
    citation_precision_recall(cited_ids, gold_ids) -> (precision, recall) | (None, None)
    verified_share(flags) -> float | None              share of citations that passed verification
    answer_in_text(texts, golds) -> bool               found-in-corpus: does evidence contain an answer
    is_abstention(answer) -> bool                      "not found" (or nothing): the system declined to answer
    bootstrap_ci(values, seed, ...) -> Interval        mean with a seeded percentile-bootstrap interval
    paired_bootstrap_diff(a, b, seed, ...) -> Interval mean(b - a) with a paired interval

`golds` is either one string or a sequence (gold answer first, then aliases). An empty
prediction always scores 0.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
YES_NO = frozenset({"yes", "no"})
# What the product answers when nothing it read answers the question; a question set marks a question whose answer
# is in no document (unanswerable) with this gold answer, so an honest abstention scores EM 1 there.
NOT_FOUND = "not found"


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, drop punctuation and articles, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def is_abstention(answer: str | None) -> bool:
    """The system said it did not find the answer ("not found", "Not found.") or said nothing."""
    return normalize_answer(answer or "") in {"", NOT_FOUND}


def _as_list(golds: str | Sequence[str]) -> list[str]:
    items = [golds] if isinstance(golds, str) else list(golds)
    return [g for g in items if g and normalize_answer(g)]


def is_yes_no(golds: str | Sequence[str], flag: bool = False) -> bool:
    """A yes/no question: the dataset says so, or its gold answer normalises to yes or no."""
    if flag:
        return True
    items = _as_list(golds)
    return bool(items) and normalize_answer(items[0]) in YES_NO


def exact_match(pred: str | None, golds: str | Sequence[str], yes_no: bool | None = None) -> float:
    """1.0 when the normalised prediction equals the normalised gold answer or any alias.

    `yes_no` is accepted for symmetry with `f1`; EM is the same either way.
    """
    del yes_no
    norm_pred = normalize_answer(pred or "")
    if not norm_pred:
        return 0.0
    return float(any(norm_pred == normalize_answer(g) for g in _as_list(golds)))


def _token_f1(norm_pred: str, norm_gold: str) -> float:
    pred_tokens, gold_tokens = norm_pred.split(), norm_gold.split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1(pred: str | None, golds: str | Sequence[str], yes_no: bool | None = None) -> float:
    """Token-level F1 over normalised text, max over gold + aliases.

    Yes/no questions (``yes_no=True``, or a gold answer of yes/no when ``yes_no`` is None)
    count by exact match only, so "yes, it is not" earns nothing for gold "no".
    """
    gold_list = _as_list(golds)
    norm_pred = normalize_answer(pred or "")
    if not norm_pred or not gold_list:
        return 0.0
    if yes_no if yes_no is not None else is_yes_no(gold_list):
        return exact_match(pred, gold_list)
    best = 0.0
    for gold in gold_list:
        norm_gold = normalize_answer(gold)
        # As in HotpotQA's scorer: a bare yes/no prediction to a non-yes/no gold earns nothing.
        if norm_pred in YES_NO and norm_pred != norm_gold:
            continue
        best = max(best, _token_f1(norm_pred, norm_gold))
    return best


def citation_precision_recall(
    cited_ids: Iterable[str | None], gold_ids: Iterable[str]
) -> tuple[float, float] | tuple[None, None]:
    """Precision and recall of the cited document ids against the gold ones (duplicates count once).

    Returns (None, None) when there are no gold ids (nothing to judge against). Citing nothing
    gives precision 0.0 and recall 0.0, so an uncited answer is never rewarded for citations.
    """
    gold = {g for g in gold_ids if g}
    if not gold:
        return None, None
    cited = {c for c in cited_ids if c}
    if not cited:
        return 0.0, 0.0
    hits = len(cited & gold)
    return hits / len(cited), hits / len(gold)


def verified_share(flags: Iterable[bool]) -> float | None:
    """Share of citations whose quote was verified against its source; None when nothing was cited."""
    values = [bool(f) for f in flags]
    return sum(values) / len(values) if values else None


def answer_in_text(texts: Iterable[str], golds: str | Sequence[str]) -> bool:
    """Found-in-corpus: does any evidence text contain the normalised gold answer or an alias?

    Matches whole normalised tokens, so gold "1922" is not found inside "19225".
    """
    needles = [normalize_answer(g) for g in _as_list(golds)]
    needles = [n for n in needles if n]
    if not needles:
        return False
    for text in texts:
        haystack = f" {normalize_answer(text)} "
        if any(f" {n} " in haystack for n in needles):
            return True
    return False


class Interval(NamedTuple):
    """A mean with its bootstrap confidence interval (low, high). n = values it came from."""

    mean: float
    low: float
    high: float
    n: int


def _clean(values: Iterable[float | None]) -> np.ndarray:
    arr = np.array([v for v in values if v is not None and not math.isnan(v)], dtype=np.float64)
    return arr


def bootstrap_ci(
    values: Iterable[float | None], seed: int = 0, resamples: int = 1000, confidence: float = 0.95
) -> Interval:
    """Mean of `values` and a percentile-bootstrap interval, reproducible for a given seed.

    None/NaN values (e.g. citation recall of a question without gold documents) are left out;
    no values at all gives NaN for all three numbers and n = 0.
    """
    arr = _clean(values)
    if arr.size == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(resamples, arr.size))
    means = arr[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(float(arr.mean()), float(low), float(high), int(arr.size))


def paired_bootstrap_diff(
    a: Sequence[float | None], b: Sequence[float | None], seed: int = 0, resamples: int = 1000,
    confidence: float = 0.95,
) -> Interval:
    """Mean of (b - a) over paired items and its bootstrap interval, resampling the pairs together.

    Pairs where either side is None/NaN are left out. An interval that excludes 0 is a
    difference the sample supports at that confidence.
    """
    if len(a) != len(b):
        raise ValueError(f"paired values need equal lengths, got {len(a)} and {len(b)}")
    diffs = [
        y - x for x, y in zip(a, b, strict=True)
        if x is not None and y is not None and not math.isnan(x) and not math.isnan(y)
    ]
    return bootstrap_ci(diffs, seed=seed, resamples=resamples, confidence=confidence)
