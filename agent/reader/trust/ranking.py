"""The answer candidates ranked with how much of the question each one's unit is about.

The features (answers/candidates.py) score a span by the words near it; two spans of units that say as much near
them tie, though one unit covers the whole question and the other half of it ("Wheels trued on the new stand so
far: 37" against "Truing stand TS-2.3 … arrived" for "On what date did the new truing stand arrive?"). So the
candidates the writer chooses from are re-sorted by

    score(c) = features(c) + ABOUT_WEIGHT · relevance(c)            relevance: relevance.py, 0..1

within the pool the features chose: the policy's likelihood is added on top (graph/scoring.py), and the trainer
builds its choice sets with the same order (train/choice/trainer.py), so what it learns is what the graph does.
The confidence (confidence.py) still reads the feature score alone: the term changes which candidate is judged,
not how a candidate is judged.

ABOUT_WEIGHT was chosen on 800 pool *train* questions over simulated evidence (top-1 129 at 0; 131 / 135 / 135 /
133 / 130 at 1 / 2 / 3 / 5 / 8): dev/LOG.md, session 73.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..answers.candidates import Candidate, best_first
from .relevance import RelevanceReader

ABOUT_WEIGHT = 3.0


def by_relevance(candidates: Sequence[Candidate], reader: RelevanceReader) -> list[Candidate]:
    """The candidates with ABOUT_WEIGHT · relevance added to their score, best first (their features unchanged)."""
    scored = [replace(c, score=c.score + ABOUT_WEIGHT * reader.of_answer(c.text, c.url, c.quote).score)
              for c in candidates]
    return best_first(scored)
