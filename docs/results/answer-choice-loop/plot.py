"""learning.png for the answer choice trained inside the loop: what each round learned from, and dev EM per
checkpoint against the base model on all 351 dev questions (session 37).

    .venv/bin/python docs/results/answer-choice-loop/plot.py

Reads the round logs and eval directories of this folder and `../answer-choice-dev-100/eval-351-base`
(the base model's run of the same graph code, T 0); the intervals are `deepresearch eval compare`'s paired
bootstrap of trained − base.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
from deepresearch.evals.compare import compare_dirs  # noqa: E402

HERE = Path(__file__).resolve().parent
BASE = HERE.parent / "answer-choice-dev-100" / "eval-351-base"
LOGS = ["answer-only-32-per-round.txt", "answer-only-32-per-round-resumed.txt", "answer-only-rounds-4-7.txt"]
CHECKPOINTS = {3: "eval-351-loop", 7: "eval-351-loop7"}  # round → its adapter's eval on the 351
ROUND = re.compile(r"round (\d+):.*answer choice: (\d+) candidate sets, loss ([\d.]+)")


def rounds() -> dict[int, tuple[int, float]]:
    """round → (candidate sets, choice loss) from the train logs."""
    found: dict[int, tuple[int, float]] = {}
    for name in LOGS:
        for match in ROUND.finditer((HERE / name).read_text()):
            found[int(match[1])] = (int(match[2]), float(match[3]))
    return dict(sorted(found.items()))


def main() -> None:
    per_round = rounds()
    fig, (sets_ax, em_ax) = plt.subplots(1, 2, figsize=(11, 3.8))

    xs = list(per_round)
    sets_ax.bar(xs, [per_round[r][0] for r in xs], color="tab:blue", alpha=0.6, label="candidate sets this round")
    cumulative = [sum(per_round[q][0] for q in xs if q <= r) for r in xs]
    sets_ax.plot(xs, cumulative, "o-", color="tab:blue", label="candidate sets so far")
    loss_ax = sets_ax.twinx()
    loss_ax.plot(xs, [per_round[r][1] for r in xs], "s--", color="tab:orange", label="choice loss (−log Σ correct p)")
    sets_ax.set(title="what each round learned from (32 questions × G 2)", xlabel="round", ylabel="candidate sets")
    loss_ax.set_ylabel("choice loss")
    handles = sets_ax.get_legend_handles_labels()[0] + loss_ax.get_legend_handles_labels()[0]
    sets_ax.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="upper left")

    def against_base(directory: str):
        return next(iter(compare_dirs(BASE, HERE / directory, systems=("graph", "graph")).systems.values()))

    points = [(0, None)] + [(r, against_base(d)) for r, d in CHECKPOINTS.items()]
    base_em = points[1][1].metrics["em"].a
    for metric, colour in (("em", "tab:purple"), ("f1", "tab:green")):
        values, lows, highs = [], [], []
        for _, diff in points:
            if diff is None:
                values.append(base_em if metric == "em" else points[1][1].metrics["f1"].a)
                lows.append(0.0)
                highs.append(0.0)
                continue
            m = diff.metrics[metric]
            values.append(m.b)
            lows.append(m.diff.mean - m.diff.low)
            highs.append(m.diff.high - m.diff.mean)
        em_ax.errorbar([r for r, _ in points], values, yerr=[lows, highs], fmt="o-", capsize=4, color=colour,
                       label=f"{metric.upper()} (bars: paired 95 % CI of trained − base)")
        for (r, _), v in zip(points, values, strict=True):
            em_ax.annotate(f"{v:.3f}", (r, v), textcoords="offset points", xytext=(6, -10), fontsize=7)
    em_ax.axhline(base_em + 0.05, color="grey", ls=":", label="base EM + 0.05 (issue 13's bar)")
    em_ax.set(title="dev EM per checkpoint, all 351 dev questions (T 0)", xlabel="round (0 = base model)",
              ylabel="score", ylim=(0.15, 0.30))
    em_ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(HERE / "learning.png", dpi=120)
    print(f"wrote {HERE / 'learning.png'}")


if __name__ == "__main__":
    main()
