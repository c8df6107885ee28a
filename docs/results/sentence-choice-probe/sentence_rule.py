"""A fitted linear rule over sentence attributes instead of the model (session 45; ~1 min):

    .venv/bin/python docs/results/sentence-choice-probe/sentence_rule.py

Each question's sentences (those of its top-30 spans, best 8) described by: the best span's feature score
(relative to the question's best), the sentence's rank, found by the hop, a lead sentence, its source's search
rank, the share of the question's words in it and in its source's title, its title names a bridge, its number
of candidate spans, its length. A logistic regression (sentence holds the gold) fitted on half the free-form
train questions picks the sentence on the other half; the answer is the features' best span in it. Two-fold,
three shuffles. scikit-learn comes with sentence-transformers in .venv.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
from deepresearch.agent.graph import candidates as C
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))  # probe.py: the same question sets
from probe import by_sentence, question_sets  # noqa: E402


def question_rows() -> list[tuple[np.ndarray, list[bool], list[bool]]]:
    """Per question: sentence attributes, its best span is the gold, some span of it is (probe.py's sets)."""
    out = []
    for q, candidates, golds, sentences, bridges in question_sets():
        if not candidates:
            continue
        meta = {s.text: s for s in sentences}
        asked = set(C.content_words(q["question"]))
        spans = Counter(c.quote for c in candidates)
        chosen = list(by_sentence(candidates, golds).items())[:8]
        rows = []
        for rank, (quote, (score, _, _)) in enumerate(chosen):
            s = meta[quote]
            words, title = set(C.content_words(quote)), set(C.content_words(s.title))
            rows.append([score - chosen[0][1][0], rank, float(s.hop), float(s.position == 0), s.source,
                         len(words & asked) / max(1, len(asked)), len(title & asked) / max(1, len(asked)),
                         float(any(b.lower() in s.title.lower() for b in bridges)), spans[quote],
                         min(len(quote), 400) / 100])
        out.append((np.array(rows), [first for _, (_, first, _) in chosen], [some for _, (_, _, some) in chosen]))
    return out


def main() -> None:
    data = question_rows()
    print(f"{len(data)} questions; features' top 1 {sum(d[1][0] for d in data)}")
    for shuffle in range(3):
        order = list(range(len(data)))
        random.Random(shuffle).shuffle(order)
        half = len(order) // 2
        fitted = features = 0
        for fit, test in ((order[:half], order[half:]), (order[half:], order[:half])):
            model = LogisticRegression(C=0.1, max_iter=2000).fit(
                np.vstack([data[i][0] for i in fit]), np.concatenate([data[i][2] for i in fit]))
            fitted += sum(data[i][1][int(np.argmax(model.decision_function(data[i][0])))] for i in test)
            features += sum(data[i][1][0] for i in test)
        print(f"shuffle {shuffle}: fitted rule {fitted}, features {features} (both folds)")


if __name__ == "__main__":
    main()
