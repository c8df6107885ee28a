"""How far a perfect answer choice could go: the gold among the re-ranker's five candidates, per dev question.

    .venv/bin/python docs/results/answer-choice-dev-100/pool_ceiling.py

`eval-351-all-train/pools.jsonl` holds each question's five candidates as its run's re-ranker logged them
(the `answer_scores` event of the trace, read from the eval's trace store after the run). The five are the
features' top 5, the same set for the base model's run: planner, extractor and writer answer on the base
weights in both runs, and the two runs' tool calls and evidence are identical (`compare-351-all-train.md`).
So "base right, or the gold among the five" is what a re-ranker that always picked the gold would score.
"""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.evals.metrics import exact_match
from deepresearch.evals.results import QuestionResult
from deepresearch.evals.results_file import ResultsFile

HERE = Path(__file__).resolve().parent


def results(name: str) -> dict[str, QuestionResult]:
    return {r.question_id: r for r in ResultsFile(HERE / name).load()}


def main() -> None:
    base, trained = results("eval-351-base"), results("eval-351-all-train")
    pools_file = HERE / "eval-351-all-train" / "pools.jsonl"
    scored = {p["question_id"]: p["candidates"] for p in map(json.loads, pools_file.open())}
    pools = {q: [c["text"] for c in candidates] for q, candidates in scored.items()}
    in_pool = {q for q, texts in pools.items() if any(exact_match(t, base[q].gold) for t in texts)}
    base_em = sum(r.scores.em for r in base.values())
    ceiling = sum(1 for q, r in base.items() if r.scores.em or q in in_pool)
    n = len(base)
    print(f"{n} dev questions; {len(pools)} with a re-ranked pool of candidates; "
          f"the gold among the five: {len(in_pool)}")
    print(f"EM base {base_em:.0f} ({base_em / n:.3f}), trained {sum(r.scores.em for r in trained.values()):.0f}; "
          f"a choice that always picks the gold when it is among the five: {ceiling} ({ceiling / n:.3f}, "
          f"+{(ceiling - base_em) / n:.3f})")
    wrong = [q for q in in_pool if not base[q].scores.em]
    print(f"gold among the five but the base answer wrong: {len(wrong)}; of those the trained adapter answers "
          f"{sum(1 for q in wrong if trained[q].scores.em)} right")
    by_features = sum(exact_match(max(scored[q], key=lambda c: c["features"])["text"], base[q].gold)
                      for q in in_pool)
    print(f"of the {len(in_pool)} with the gold among the five, right: by the features alone {by_features:.0f}, "
          f"the base graph (features + base likelihood) {sum(base[q].scores.em for q in in_pool):.0f}, "
          f"the trained graph {sum(trained[q].scores.em for q in in_pool):.0f}")


if __name__ == "__main__":
    main()
