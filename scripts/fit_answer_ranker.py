"""Fit the answer ranker's feature weights (agent/graph/candidates.py: W) on pool *train* questions.

    .venv/bin/python scripts/fit_answer_ranker.py [--pool ../shared/data/pool] [--limit 800]

For each free-form train question (not yes/no, not "A or B") the evidence is gathered as the graph
gathers it — the question's own search (4 sources), then a hop for the best-ranked bridge name
(4 more) — over an in-memory SQLite FTS5 index of the pool corpus (train/simulated_evidence.py).
Every candidate span gets its feature vector; a span is right when it normalises to a gold answer.
The weights maximise the listwise likelihood

    L(w) = Σ_q log softmax_c(w · f(c))[gold]  −  λ‖w‖²

over the questions whose candidates include a gold span. Two-fold cross-validation on train reports
top-1 / top-5 for the current weights and the fitted ones; the weights fitted on all of train are
printed as the dict to paste into candidates.py. The dev split is never read.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from deepresearch.agent.graph import candidates as C
from deepresearch.evals.metrics import normalize_answer
from deepresearch.train.choice.simulated_evidence import SimulatedSearch, free_form_train_questions

FEATURES = ["about", "relation", "near", "novel", "source", "typed", "shape", "kind", "bridge", "hop", "lead",
            "subject", "early", "repeats", "category"]


def examples(pool: Path, limit: int, embed: bool = False) -> list[tuple[torch.Tensor, list[bool]]]:
    search = SimulatedSearch(pool / "corpus.jsonl")
    out = []
    for q in free_form_train_questions(pool / "questions.jsonl", seed=0)[:limit]:
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        sents, bridges = search.evidence(q["question"])
        cands = C.rank_candidates(q["question"], sents, k=100_000, bridges=bridges)
        if not cands:
            continue
        if embed:
            from deepresearch.tools.embedding import Embedder
            quotes = sorted({c.quote for c in cands})
            vecs = torch.tensor(Embedder().embed([q["question"], *quotes]))
            sim = dict(zip(quotes, (vecs[1:] @ vecs[0]).tolist(), strict=True))
            for c in cands:
                c.features["sim"] = sim[c.quote]
        x = torch.tensor([[c.features.get(f, 0.0) for f in FEATURES] for c in cands])
        out.append((x, [normalize_answer(c.text) in golds for c in cands]))
    return out


def fit(data: list[tuple[torch.Tensor, list[bool]]], l2: float = 0.01) -> torch.Tensor:
    usable = [(x, torch.tensor(y)) for x, y in data if any(y)]
    w = torch.zeros(len(FEATURES), requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=200, line_search_fn="strong_wolfe")

    def loss() -> torch.Tensor:
        opt.zero_grad()
        nll = sum(-(torch.logsumexp((x @ w)[y], 0) - torch.logsumexp(x @ w, 0)) for x, y in usable)
        total = nll / len(usable) + l2 * (w * w).sum()
        total.backward()
        return total

    opt.step(loss)
    return w.detach()


def top_k(data: list[tuple[torch.Tensor, list[bool]]], w: torch.Tensor) -> tuple[float, float]:
    hits1 = hits5 = 0
    for x, y in data:
        order = torch.argsort(-(x @ w), stable=True).tolist()
        hits1 += y[order[0]]
        hits5 += any(y[i] for i in order[:5])
    return hits1 / len(data), hits5 / len(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/pool")
    parser.add_argument("--limit", type=int, default=800)
    parser.add_argument("--embed", action="store_true", help="add the MiniLM question-sentence similarity")
    args = parser.parse_args()
    if args.embed:
        FEATURES.append("sim")
    data = examples(args.pool, args.limit, args.embed)
    current = torch.tensor([C.W.get(f, 0.0) for f in FEATURES])
    half = len(data) // 2
    print(f"{len(data)} questions with candidates; {sum(any(y) for _, y in data)} with a gold candidate")
    print("| fold | weights | top-1 | top-5 |\n|---|---|---|---|")
    for name, train, test in (("A", data[:half], data[half:]), ("B", data[half:], data[:half])):
        for label, w in (("current", current), ("fitted", fit(train))):
            t1, t5 = top_k(test, w)
            print(f"| {name} | {label} | {t1:.3f} | {t5:.3f} |")
    w = fit(data)
    print("W =", {f: round(float(v), 3) for f, v in zip(FEATURES, w, strict=True)})


if __name__ == "__main__":
    main()
