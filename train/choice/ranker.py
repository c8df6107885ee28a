"""Fit the answer ranker's feature weights (agent/graph/candidates.py: W) on a QA pool's *train* questions
(`deepresearch build ranker`).

For each free-form train question (not yes/no, not "A or B") the evidence is gathered as the graph gathers it —
the question's own search (4 sources), then a hop for the best-ranked bridge name (4 more) — over an in-memory
SQLite FTS5 index of the pool corpus (simulated_evidence.py). Every candidate span gets its feature vector; a
span is right when it normalises to a gold answer. The weights maximise the listwise likelihood

    L(w) = Σ_q log softmax_c(w · f(c))[gold]  −  λ‖w‖²

over the questions whose candidates include a gold span: the choice loss of answer_choice.py with the features
as the only score. Two-fold cross-validation on train reports top-1 / top-5 for the current weights and the
fitted ones; the weights fitted on all of train are printed as the dict to paste into candidates.py. The dev
split is never read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch
from deepresearch.agent.reader import FEATURE_WEIGHTS, answer_options
from deepresearch.evals.scoring.metrics import normalize_answer

from .simulated_evidence import SimulatedSearch, free_form_train_questions

FEATURES = ("about", "relation", "near", "novel", "source", "typed", "shape", "kind", "bridge", "hop", "lead",
            "subject", "early", "repeats", "category")
EMBEDDED_FEATURE = "sim"  # the MiniLM question-sentence similarity, with `embed`

class RankerDataError(ValueError):
    """A pool with nothing to fit on (the message is one line for the user)."""


RankerSet = tuple[torch.Tensor, list[bool]]  # one question: its candidates' feature rows, and which are gold


def features(embed: bool = False) -> list[str]:
    return [*FEATURES, EMBEDDED_FEATURE] if embed else list(FEATURES)


def ranker_sets(pool: Path, limit: int, embed: bool = False) -> list[RankerSet]:
    """Every candidate of the first `limit` free-form train questions (seed 0's order) that have any."""
    names = features(embed)
    search = SimulatedSearch(pool / "corpus.jsonl")
    out = []
    for q in free_form_train_questions(pool / "questions.jsonl", seed=0)[:limit]:
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        sents, bridges = search.evidence(q["question"])
        cands = answer_options(q["question"], sents, pool=100_000, bridges=bridges).candidates
        if not cands:
            continue
        if embed:
            from deepresearch.tools.embedding import Embedder
            quotes = sorted({c.quote for c in cands})
            vecs = torch.tensor(Embedder().embed([q["question"], *quotes]))
            sim = dict(zip(quotes, (vecs[1:] @ vecs[0]).tolist(), strict=True))
            for c in cands:
                c.features[EMBEDDED_FEATURE] = sim[c.quote]
        x = torch.tensor([[c.features.get(f, 0.0) for f in names] for c in cands])
        out.append((x, [normalize_answer(c.text) in golds for c in cands]))
    return out


def fit(data: list[RankerSet], l2: float = 0.01) -> torch.Tensor:
    """The weights that maximise L(w) above (L-BFGS from zero) over the sets with a gold candidate."""
    usable = [(x, torch.tensor(y)) for x, y in data if any(y)]
    w = torch.zeros(data[0][0].shape[1], requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=200, line_search_fn="strong_wolfe")

    def loss() -> torch.Tensor:
        opt.zero_grad()
        nll = sum(-(torch.logsumexp((x @ w)[y], 0) - torch.logsumexp(x @ w, 0)) for x, y in usable)
        total = nll / len(usable) + l2 * (w * w).sum()
        total.backward()
        return total

    opt.step(loss)
    return w.detach()


def top_k(data: list[RankerSet], w: torch.Tensor) -> tuple[float, float]:
    """The share of sets whose best-scored candidate is gold (top-1), and with a gold one among the best 5."""
    hits1 = hits5 = 0
    for x, y in data:
        order = torch.argsort(-(x @ w), stable=True).tolist()
        hits1 += y[order[0]]
        hits5 += any(y[i] for i in order[:5])
    return hits1 / len(data), hits5 / len(data)


def fit_report(pool: Path, limit: int, embed: bool, say: Callable[[str], None]) -> dict[str, float]:
    """The cross-validation table and the weights fitted on all of it, line by line to `say`; returns W."""
    names = features(embed)
    data = ranker_sets(pool, limit, embed)
    if not any(any(y) for _, y in data):
        raise RankerDataError(f"no train question of {pool} has a gold candidate: nothing to fit")
    current = torch.tensor([FEATURE_WEIGHTS.get(f, 0.0) for f in names])
    half = len(data) // 2
    say(f"{len(data)} questions with candidates; {sum(any(y) for _, y in data)} with a gold candidate")
    say("| fold | weights | top-1 | top-5 |")
    say("|---|---|---|---|")
    for name, train, test in (("A", data[:half], data[half:]), ("B", data[half:], data[:half])):
        for label, w in (("current", current), ("fitted", fit(train))):
            t1, t5 = top_k(test, w)
            say(f"| {name} | {label} | {t1:.3f} | {t5:.3f} |")
    weights = {f: round(float(v), 3) for f, v in zip(names, fit(data), strict=True)}
    say(f"W = {weights}")
    return weights
