"""Metric functions on hand-written cases: the trainer's rewards rely on these numbers."""

from __future__ import annotations

import math

import pytest
from deepresearch.evals.scoring.metrics import (
    answer_in_text,
    bootstrap_ci,
    citation_precision_recall,
    exact_match,
    f1,
    is_yes_no,
    normalize_answer,
    paired_bootstrap_diff,
    verified_share,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an   Apple, a day ", "apple day"),
        ("Theatre", "theatre"),  # "the" inside a word stays
        ("U.S.A.", "usa"),
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_normalises_and_uses_aliases() -> None:
    assert exact_match("the Beatles.", "Beatles") == 1.0
    assert exact_match("Fab Four", ["The Beatles", "the fab four"]) == 1.0
    assert exact_match("Beatles band", ["The Beatles"]) == 0.0


def test_empty_prediction_scores_zero() -> None:
    for pred in ("", "   ", None, "the", "?!"):
        assert exact_match(pred, "Paris") == 0.0
        assert f1(pred, "Paris") == 0.0


def test_f1_partial_overlap_hand_computed() -> None:
    # pred tokens: [october, 1922, end]; gold tokens: [october, 1922] -> P=2/3, R=1, F1=0.8
    assert f1("October 1922 end", "October 1922") == pytest.approx(0.8)
    # best alias wins: gold "1922" gives P=1/3 R=1 -> 0.5; alias "October 1922 end" gives 1.0
    assert f1("October 1922 end", ["1922", "october 1922 end"]) == pytest.approx(1.0)
    assert f1("nothing shared", "Paris") == 0.0


def test_f1_counts_repeated_tokens_once_each() -> None:
    # pred [new, new, york], gold [new, york]: common = 2, P = 2/3, R = 1 -> 0.8
    assert f1("new new york", "New York") == pytest.approx(0.8)


def test_yes_no_questions_count_by_exact_match_only() -> None:
    assert is_yes_no("Yes")
    assert is_yes_no(["no", "nope"])
    assert is_yes_no("Paris", flag=True)
    assert not is_yes_no("Paris")
    # "yes it is" shares the token "yes" with gold "yes" but EM says 0 — and so must F1
    assert f1("yes it is", "yes") == 0.0
    assert f1("Yes.", "yes") == 1.0
    # dataset flag: a gold that is not literally yes/no still counts by EM
    assert f1("Paris France", "Paris", yes_no=True) == 0.0
    assert f1("Paris France", "Paris") == pytest.approx(2 / 3)


def test_bare_yes_to_non_yes_no_gold_scores_zero() -> None:
    assert f1("yes", "yes sir") == 0.0


def test_citation_precision_recall() -> None:
    assert citation_precision_recall(["a", "b", "c", "a"], ["a", "d"]) == (pytest.approx(1 / 3), 0.5)
    assert citation_precision_recall(["a", "d"], ["a", "d"]) == (1.0, 1.0)
    assert citation_precision_recall([], ["a"]) == (0.0, 0.0)
    assert citation_precision_recall([None, "x"], ["a"]) == (0.0, 0.0)
    assert citation_precision_recall(["a"], []) == (None, None)


def test_verified_share() -> None:
    assert verified_share([True, False, True, True]) == 0.75
    assert verified_share([]) is None


def test_answer_in_text_matches_whole_tokens() -> None:
    assert answer_in_text(["The war ended in October 1922."], ["october 1922"])
    assert not answer_in_text(["in 19225 it ended"], "1922")
    assert answer_in_text(["nothing", "The Fab Four played"], ["The Beatles", "fab four"])
    assert not answer_in_text([], "x")


def test_bootstrap_ci_is_seeded_and_brackets_the_mean() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    a = bootstrap_ci(values, seed=3)
    b = bootstrap_ci(values, seed=3)
    c = bootstrap_ci(values, seed=4)
    assert a == b
    # another seed resamples differently (continuous values so the quantiles differ)
    spread = [i / 37 for i in range(37)]
    assert bootstrap_ci(spread, seed=3) != bootstrap_ci(spread, seed=4)
    assert c.mean == a.mean
    assert a.mean == pytest.approx(0.55)
    assert a.low < a.mean < a.high
    assert a.low >= 0.0 and a.high <= 1.0
    assert a.n == 10


def test_bootstrap_ci_constant_and_empty_and_none() -> None:
    const = bootstrap_ci([0.5] * 20, seed=0)
    assert (const.mean, const.low, const.high) == (0.5, 0.5, 0.5)
    empty = bootstrap_ci([None, float("nan")], seed=0)
    assert empty.n == 0 and math.isnan(empty.mean)
    assert bootstrap_ci([1.0, None, 0.0], seed=0).n == 2


def test_bootstrap_interval_narrows_with_more_data() -> None:
    small = bootstrap_ci([0.0, 1.0] * 5, seed=1)
    large = bootstrap_ci([0.0, 1.0] * 500, seed=1)
    assert (large.high - large.low) < (small.high - small.low)


def test_paired_bootstrap_diff() -> None:
    a = [0.0, 0.0, 1.0, 0.0, 1.0, 0.0] * 10
    b = [1.0, 0.0, 1.0, 1.0, 1.0, 0.0] * 10
    diff = paired_bootstrap_diff(a, b, seed=0)
    assert diff.mean == pytest.approx(1 / 3)
    assert diff.low > 0  # b is better on the same questions, and the interval says so
    same = paired_bootstrap_diff(a, a, seed=0)
    assert (same.mean, same.low, same.high) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="equal lengths"):
        paired_bootstrap_diff([1.0], [1.0, 0.0])
