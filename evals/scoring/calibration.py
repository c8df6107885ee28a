"""How far a system's own confidence can be trusted: the coverage-precision curve.

The answers of the answerable questions are sorted by the confidence the system reported, most confident first;
at each coverage (the share of those questions answered, from the top of that order) the curve gives the
precision (EM among them) and how many of all the right answers are still kept. A confidence worth having keeps
precision high as coverage falls; one that says nothing gives the same precision at every coverage. It is where
an abstention threshold is chosen: on a set other than the one it is reported on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from deepresearch.evals.run.results import QuestionResult

COVERAGES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


class CurvePoint(BaseModel):
    coverage: float  # share of the answerable questions answered at this cut
    answered: int
    precision: float  # EM among those answered
    right_kept: float  # their right answers over all the right answers the system gave
    threshold: float  # the lowest confidence answered at this cut


def coverage_precision(results: Sequence[QuestionResult], coverages: Sequence[float] = COVERAGES) -> list[CurvePoint]:
    """The curve over the answerable questions the system answered with a confidence; [] when it reported none."""
    answerable = [r for r in results if not r.unanswerable]
    scored = [r for r in answerable if r.scores.answered and r.output.confidence is not None]
    if not scored:
        return []
    # Ties broken by question id, so the curve is a function of the results alone.
    ranked = sorted(scored, key=lambda r: (-float(r.output.confidence or 0.0), r.question_id))
    right_total = sum(r.scores.em for r in ranked)
    points: list[CurvePoint] = []
    for coverage in coverages:
        k = min(len(ranked), round(coverage * len(answerable)))
        if k == 0 or (points and points[-1].answered == k):
            continue
        top = ranked[:k]
        right = sum(r.scores.em for r in top)
        points.append(CurvePoint(
            coverage=k / len(answerable), answered=k, precision=right / k,
            right_kept=right / right_total if right_total else 0.0, threshold=float(top[-1].output.confidence or 0.0),
        ))
    return points
