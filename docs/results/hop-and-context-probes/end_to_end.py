"""The graph's two trained decisions end to end on held-out questions: the bridge pick, its hop, the answer pick.

    .venv/bin/python docs/results/hop-and-context-probes/end_to_end.py hop-weight base train/starter_adapter
    .venv/bin/python docs/results/hop-and-context-probes/end_to_end.py lookahead base train/starter_adapter

The starter's 200 held-out train questions (seed 0), searched as train/simulated_evidence.py does. The follow-up
hop offers five names (follow_up.bridge_options), ranked as in the graph: the rule's order for the base model,
features + likelihood for an adapter trained for the bridge. A hop's new documents join the evidence as the
hop's; the answer pool is the 16 best spans by features, and its pick the best by features + likelihood.

    hop-weight  one hop (the first name); the pool ranked with a "hop" feature (1 for a sentence of the hop's
                documents) at weight w. Prints how often the hop reads a new gold document and, per w, how
                often the pool holds the gold and the pick is it.
    lookahead   a hop for each of the two first names, the pool ranked in each hop's evidence; prints how often
                one hop's pick is the gold (the graph), the better-scoring of the two hops' picks, or either.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

QUESTIONS, POOL, HOP_WEIGHTS, HOPS = 200, 16, (0.0, 0.5, 1.0, 2.0, 3.0), 2


def load() -> SimpleNamespace:
    """The modules used, imported after the environment above is set."""
    import torch
    import train_answer_choice as script
    from deepresearch.agent.graph import candidates as C
    from deepresearch.agent.graph.bridge_scoring import BRIDGE_TEMPLATE
    from deepresearch.agent.graph.evidence import normalise, split_sentences
    from deepresearch.agent.graph.follow_up import bridge_options
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.evals.metrics import normalize_answer
    from deepresearch.train import answer_choice as A
    from deepresearch.train.simulated_evidence import free_form_train_questions

    return SimpleNamespace(torch=torch, C=C, A=A, BRIDGE_TEMPLATE=BRIDGE_TEMPLATE, normalise=normalise,
                           split_sentences=split_sentences, bridge_options=bridge_options,
                           normalize_answer=normalize_answer,
                           questions=free_form_train_questions(script.POOL / "questions.jsonl", 0)[:QUESTIONS],
                           search=script.simulated_search(script.POOL / "corpus.jsonl"),
                           model_dir=embedded_model_dir(load_settings().cache_dir))


class Question:
    """One held-out question: its own search, its names ranked by the model's bridge choice, and hops."""

    def __init__(self, m: SimpleNamespace, scorer, trained: bool, q: dict):
        self.m, self.scorer, self.q = m, scorer, q
        self.golds = {m.normalize_answer(g) for g in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        self.docs = m.search.search(q["question"])
        self.seen, self.asked = {d[0] for d in self.docs}, m.search.sentences(self.docs)
        names = m.bridge_options(q["question"], self.asked, {m.normalise(q["question"])})
        if trained and len(names) > 1:
            s = self.scores([(n.text, n.quote, n.score) for n in names], m.BRIDGE_TEMPLATE)
            names = [names[i] for i in sorted(range(len(names)), key=lambda i: -s[i])]
        self.names = names

    def scores(self, candidates: list[tuple[str, str, float]], template: str | None = None) -> list[float]:
        kw = {} if template is None else {"template": template}
        ex = self.m.A.ChoiceExample(self.q["question"], tuple(candidates), tuple(False for _ in candidates), **kw)
        return self.scorer.scores(ex).tolist()

    def hop(self, bridge: str) -> tuple[list, bool]:
        """The evidence after a hop for `bridge`, and whether the hop read a new gold document."""
        hop_docs = [d for d in self.m.search.search(bridge) if d[0] not in self.seen]
        sents = list(self.asked) + [
            self.m.C.EvidenceSentence(x, r, title, hop=True, url=doc_id, position=i)
            for r, (doc_id, title, text) in enumerate(hop_docs) for i, x in enumerate(self.m.split_sentences(text))]
        return sents, bool(set(self.q.get("gold_doc_ids", [])) & {d[0] for d in hop_docs})

    def right(self, text: str) -> bool:
        return self.m.normalize_answer(text) in self.golds


def hop_weight(m: SimpleNamespace, name: str, scorer) -> dict:
    top1, among, hop_gold = dict.fromkeys(HOP_WEIGHTS, 0), dict.fromkeys(HOP_WEIGHTS, 0), 0
    for q in m.questions:
        one = Question(m, scorer, name != "base", q)
        sents, bridges = one.asked, []
        if one.names:
            sents, found = one.hop(one.names[0].text)
            bridges, hop_gold = [one.names[0].text], hop_gold + found
        pools = {w: m.C.rank_candidates(q["question"], sents, k=POOL, bridges=bridges, weights=dict(m.C.W, hop=w))
                 for w in HOP_WEIGHTS}
        pairs = list(dict.fromkeys((c.text, c.quote) for pool in pools.values() for c in pool))
        if not pairs:
            continue
        likelihood = dict(zip(pairs, one.scores([(t, quote, 0.0) for t, quote in pairs]), strict=True))
        for w, pool in pools.items():
            if pool:
                top1[w] += one.right(max(pool, key=lambda c: c.score + likelihood[(c.text, c.quote)]).text)
                among[w] += any(one.right(c.text) for c in pool)
    return {"hop reads a new gold document": hop_gold, "gold among the 16, by hop weight": among,
            "pick is the gold, by hop weight": top1}


def lookahead(m: SimpleNamespace, name: str, scorer) -> dict:
    first = better = either = 0
    for q in m.questions:
        one = Question(m, scorer, name != "base", q)
        picks = []  # per hop: (score, right)
        for bridge in one.names[:HOPS] or [None]:
            sents, bridges = (one.asked, []) if bridge is None else (one.hop(bridge.text)[0], [bridge.text])
            pool = m.C.rank_candidates(q["question"], sents, k=POOL, bridges=bridges)
            if pool:
                s = one.scores([(c.text, c.quote, c.score) for c in pool])
                i = max(range(len(pool)), key=s.__getitem__)
                picks.append((s[i], one.right(pool[i].text)))
        if picks:
            first += picks[0][1]
            better += max(picks)[1]
            either += any(ok for _, ok in picks)
    return {"one hop": first, "the better of two hops": better, "either hop's pick": either}


def main() -> None:
    experiment = {"hop-weight": hop_weight, "lookahead": lookahead}[sys.argv[1]]
    m = load()
    for name in sys.argv[2:]:
        scorer = m.A.ChoiceScorer.load(m.model_dir, None if name == "base" else Path(name))
        with m.torch.no_grad():
            print(name, json.dumps(experiment(m, name, scorer)), flush=True)


if __name__ == "__main__":
    main()
