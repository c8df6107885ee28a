"""Can anything pick the answer among the candidate spans better than the graph's re-ranker? (session 22)

    .venv/bin/python docs/results/answer-ranking-probes/experiments.py coverage
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py spans
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py gbdt
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py linear                          # ~1 min
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py collect --out /tmp/probe.pkl   # ~35 min
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py probe --data /tmp/probe.pkl
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py context --out /tmp/context.pkl  # ~2 h, 1 thread
    .venv/bin/python docs/results/answer-ranking-probes/experiments.py types                           # ~15 min

All on the pool's 1,103 free-form *train* questions (the dev split is never read), with the evidence the
graph would gather simulated as in train/simulated_evidence.py (no model call). A candidate is right when
it normalises to the gold answer or an alias. `gbdt` and `probe` need scikit-learn (in .venv through
sentence-transformers).

- coverage: where the gold is — in the evidence text at all, in the feature ranking's top 1/5/10/20/50.
- spans:    two more span rules ("Hells Angel Alan Passaro" → its last 2–3 words; "Warsaw, Poland" for a
            name followed by ", <US state or country>"), top-1/5/20 of the feature ranking.
- gbdt:     a gradient-boosted classifier over every candidate feature, the hand score, rank and
            question kind, trained on one half of the questions and measured on the other (3 splits).
- collect:  for the top 5 by features, the re-ranker's likelihood, the likelihood with no context
            ("Question: q\\nAnswer:") and the final hidden state at the candidate's last token.
- context:  the re-ranker's likelihood given the candidate's sentence, the bridge chain, or one context shared
            by the five; top-1 of features + w · each (session 23).
- types:    for questions that name the answer's type ("what city", "which British rock band"), the model's own
            knowledge of each candidate's type: mean log π(" a city" | "<candidate> is"); top-1 of the
            re-ranker plus w · that (session 29).
- probe:    top-1 of the re-ranker; of the features plus likelihood plus or minus the no-context
            likelihood (PMI and its opposite); of a logistic probe over features + the hidden state
            (two-fold, 3 splits).
"""

from __future__ import annotations

import argparse
import pickle
from collections import Counter
from pathlib import Path

import numpy as np
from deepresearch.agent.graph import candidates as C
from deepresearch.agent.graph import spans as S
from deepresearch.agent.graph.answer_scoring import TEMPLATE
from deepresearch.agent.graph.countries import COUNTRY_OF
from deepresearch.evals.metrics import normalize_answer
from deepresearch.train.simulated_evidence import SimulatedSearch, free_form_train_questions

POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"
US_STATES = ["alabama", "alaska", "arizona", "arkansas", "california", "colorado", "connecticut", "delaware",
             "florida", "georgia", "hawaii", "idaho", "illinois", "indiana", "iowa", "kansas", "kentucky", "louisiana",
             "maine", "maryland", "massachusetts", "michigan", "minnesota", "mississippi", "missouri", "montana",
             "nebraska", "nevada", "new hampshire", "new jersey", "new mexico", "new york", "north carolina",
             "north dakota", "ohio", "oklahoma", "oregon", "pennsylvania", "rhode island", "south carolina",
             "south dakota", "tennessee", "texas", "utah", "vermont", "virginia", "washington", "west virginia",
             "wisconsin", "wyoming"]
PLACES = {*US_STATES, "england", "scotland", "wales", "ontario", "quebec", *COUNTRY_OF}


def questions() -> list[tuple[dict, set[str], list, list[str]]]:
    """(question, its gold answers normalised, evidence sentences, bridge names) for every question."""
    search = SimulatedSearch(POOL / "corpus.jsonl")
    out = []
    for q in free_form_train_questions(POOL / "questions.jsonl", seed=0):
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        out.append((q, golds, *search.evidence(q["question"])))
    return out


def gold_rank(q: dict, golds: set[str], sents: list, bridges: list[str], k: int) -> int | None:
    cands = C.rank_candidates(q["question"], sents, k=k, bridges=bridges)
    return next((i for i, c in enumerate(cands) if normalize_answer(c.text) in golds), None)


def coverage(data: list) -> None:
    counts: Counter = Counter()
    for q, golds, sents, bridges in data:
        text = " ".join(normalize_answer(s.text) for s in sents)
        counts["in evidence"] += any(g in text for g in golds)
        rank = gold_rank(q, golds, sents, bridges, 50)
        for k in (1, 5, 10, 20, 50):
            counts[f"top {k}"] += rank is not None and rank < k
    print(f"{len(data)} questions:", dict(counts))


def with_rules(tails: bool, places: bool):
    original = S.name_spans

    def name_spans(sentence: str) -> list[S.Span]:
        spans = original(sentence)
        extra = []
        for sp in spans if tails else []:
            words = sp.text.split()
            if len(words) >= 3 and all(w[:1].isupper() for w in words[-2:]) \
                    and not any(w in S.NAME_CONNECTORS for w in words):
                for n in (2, 3) if len(words) >= 4 else (2,):
                    tail = " ".join(words[-n:])
                    extra.append(S.Span(tail, "name", sp.start + sp.text.rfind(tail)))
        for a in spans if places else []:
            end = a.start + len(a.text)
            if sentence[end:end + 2] == ", ":
                extra += [S.Span(f"{a.text}, {b.text}", "name", a.start) for b in spans
                          if b.start == end + 2 and b.text.lower() in PLACES]
        return spans + extra
    return name_spans


def spans(data: list) -> None:
    original = S.name_spans
    for tails, places in [(False, False), (True, False), (False, True), (True, True)]:
        S.name_spans = with_rules(tails, places)
        ranks = [gold_rank(q, golds, sents, bridges, 20) for q, golds, sents, bridges in data]
        print(f"tails {tails!s:5} places {places!s:5}:",
              {k: sum(r is not None and r < k for r in ranks) for k in (1, 5, 20)})
    S.name_spans = original


def gbdt(data: list, k: int = 20) -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    groups = []
    for q, golds, sents, bridges in data:
        cands = C.rank_candidates(q["question"], sents, k=k, bridges=bridges)
        if not cands:
            continue
        kind = C.answer_kind(q["question"])
        asks = [kind == "name", kind == "date", kind == "number", bool(C._WHO.search(q["question"])),
                bool(C.answer_type_words(q["question"])), len(cands)]
        x = [list(c.features.values())
             + [c.score, i, len(c.text.split()), c.count, c.score - cands[0].score] + asks for i, c in enumerate(cands)]
        groups.append((np.array(x, float), np.array([normalize_answer(c.text) in golds for c in cands], int)))
    print(f"hand-tuned top-1 {sum(y[0] for _, y in groups)}, gold among the top {k}: {sum(y.any() for _, y in groups)}")
    for seed in range(3):
        hits = 0
        for train, test in halves(len(groups), seed):
            x = np.vstack([groups[i][0] for i in train])
            y = np.concatenate([groups[i][1] for i in train])
            model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                                   min_samples_leaf=20, random_state=0).fit(x, y)
            hits += sum(groups[i][1][int(np.argmax(model.predict_proba(groups[i][0])[:, 1]))] for i in test)
        print(f"split {seed}: gradient-boosted top-1 {hits}")


def halves(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    order = np.random.RandomState(seed).permutation(n)
    return [(order[: n // 2], order[n // 2:]), (order[n // 2:], order[: n // 2])]


def linear(data: list) -> None:
    """The feature weights learned by the choice loss (−log Σ_correct softmax w·f over every candidate, Adam from
    the hand weights W) on one half, top-1/5/20 on the other (session 37)."""
    import torch

    names = [*C.W, "hop", "lead", "subject", "early"]
    groups = []
    for q, golds, sents, bridges in data:
        cands = C.rank_candidates(q["question"], sents, k=1000, bridges=bridges)
        if cands:
            groups.append((torch.tensor([[c.features.get(n, 0.0) for n in names] for c in cands]),
                           torch.tensor([normalize_answer(c.text) in golds for c in cands])))
    hand = torch.tensor([C.W.get(n, 0.0) for n in names])

    def hits(w: torch.Tensor, idx, k: int) -> int:
        return sum(bool(groups[i][1][torch.topk(groups[i][0] @ w, min(k, len(groups[i][1]))).indices].any())
                   for i in idx)

    print(f"{len(groups)} questions with candidates, {sum(bool(y.any()) for _, y in groups)} with the gold among them")
    for seed in range(3):
        for train, test in halves(len(groups), seed):
            w = hand.clone().requires_grad_(True)
            optimizer = torch.optim.Adam([w], lr=0.05)
            learn = [i for i in train if groups[i][1].any()]
            for _ in range(300):
                optimizer.zero_grad()
                loss = sum(torch.logsumexp(groups[i][0] @ w, 0) - torch.logsumexp((groups[i][0] @ w)[groups[i][1]], 0)
                           for i in learn) / len(learn)
                loss.backward()
                optimizer.step()
            w = w.detach()
            hand_hits, learned_hits = ([hits(v, test, k) for k in (1, 5, 20)] for v in (hand, w))
            print(f"split {seed}: top-1/5/20 of {len(test)}: hand {hand_hits}, learned {learned_hits}", flush=True)


def policy_scorer(threads: int | None = None):
    """score(prompts, texts) -> (mean log π of each text after its prompt, its first token's, the hidden
    state at its end), with the embedded model through transformers."""
    import torch
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    if threads:
        torch.set_num_threads(threads)
    model_dir = embedded_model_dir(load_settings().cache_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32).eval()

    def ids(text: str) -> list[int]:
        return tokenizer(text, add_special_tokens=False)["input_ids"]

    def score(prompts: list[str], texts: list[str]) -> tuple[list[float], list[float], np.ndarray]:
        rows = [(ids(p), ids(" " + t)) for p, t in zip(prompts, texts, strict=True)]
        width = max(len(p) + len(t) for p, t in rows)
        inp = torch.zeros(len(rows), width, dtype=torch.long)
        mask = torch.zeros_like(inp)
        for i, (p, t) in enumerate(rows):
            inp[i, : len(p) + len(t)] = torch.tensor(p + t)
            mask[i, : len(p) + len(t)] = 1
        with torch.no_grad():
            hidden = model.model(input_ids=inp, attention_mask=mask).last_hidden_state
        mean, first, last = [], [], []
        for i, (p, t) in enumerate(rows):
            n, m = len(p), len(t)
            lp = torch.log_softmax(model.lm_head(hidden[i, n - 1: n - 1 + m]), -1).gather(
                -1, inp[i, n: n + m, None])[:, 0] if m else torch.full((1,), -20.0)
            mean.append(lp.mean().item())
            first.append(lp[0].item())
            last.append(hidden[i, n + m - 1].numpy())
        return mean, first, np.stack(last).astype(np.float16)

    return score


def with_candidates(data: list, k: int):
    """(index, (question, golds, sentences, bridges, the top k candidates)) where there are candidates."""
    for n, (q, golds, sents, bridges) in enumerate(data):
        cands = C.rank_candidates(q["question"], sents, k=k, bridges=bridges)
        if cands:
            yield n, (q, golds, sents, bridges, cands)


def collect(data: list, out: Path, k: int = 5) -> None:
    score = policy_scorer()
    rows = []
    for n, (q, golds, _sents, _bridges, cands) in with_candidates(data, k):
        texts = [c.text for c in cands]
        lik, _, hidden = score([TEMPLATE.format(sentence=c.quote, question=q["question"]) for c in cands], texts)
        prior, prior_first, _ = score([f"Question: {q['question']}\nAnswer:"] * len(cands), texts)
        rows.append({"y": np.array([normalize_answer(t) in golds for t in texts]),
                     "feat": np.array([list(c.features.values()) for c in cands]),
                     "score": np.array([c.score for c in cands]), "lik": np.array(lik), "prior": np.array(prior),
                     "prior_first": np.array(prior_first), "h_last": hidden})
        if n % 100 == 0:
            print(f"{n}/{len(data)}", flush=True)
    out.write_bytes(pickle.dumps(rows))
    print(f"wrote {out}: {len(rows)} questions")


def context(data: list, out: Path, k: int = 5) -> None:
    """The re-ranker's likelihood under three contexts: the candidate's sentence (what the graph uses), that
    sentence after the first-hop sentence naming the bridge (a hop candidate's chain), and one context
    shared by all five (their sentences, best first): the same text for every candidate, so their
    likelihoods compare under one reading instead of each under its own sentence."""
    score = policy_scorer(threads=1)  # leaves the other core to whatever runs beside it

    def mean_logprobs(prompts: list[str], texts: list[str]) -> list[float]:
        return score(prompts, texts)[0]

    rows = []
    for n, (q, golds, sents, bridges, cands) in with_candidates(data, k):
        texts = [c.text for c in cands]
        hop_of = {s.text: s.hop for s in sents}
        named = next((s.text for s in sents if not s.hop and bridges and bridges[0] in s.text), "")
        chained = [f"{named} {c.quote}" if hop_of.get(c.quote) and named and named != c.quote else c.quote
                   for c in cands]
        shared = " ".join(dict.fromkeys([*([named] if named else []), *(c.quote for c in cands)]))
        rows.append({
            "y": np.array([normalize_answer(t) in golds for t in texts]),
            "score": np.array([c.score for c in cands]),
            "own": np.array(mean_logprobs([TEMPLATE.format(sentence=c.quote, question=q["question"]) for c in cands],
                                          texts)),
            "chain": np.array(mean_logprobs([TEMPLATE.format(sentence=s, question=q["question"]) for s in chained],
                                            texts)),
            "shared": np.array(mean_logprobs([TEMPLATE.format(sentence=shared, question=q["question"])] * len(cands),
                                             texts)),
        })
        if n % 100 == 0:
            print(f"{n}/{len(data)}", flush=True)
    out.write_bytes(pickle.dumps(rows))
    print(f"wrote {out}: {len(rows)} questions, gold among the {k}: {sum(r['y'].any() for r in rows)}")
    for name in ("own", "chain", "shared"):
        tops = [sum(int(r["y"][int(np.argmax(r["score"] + w * r[name]))]) for r in rows) for w in (0.5, 1, 2, 4)]
        alone = sum(int(r["y"][int(np.argmax(r[name]))]) for r in rows)
        print(f"  {name:6s} context: features + w·likelihood, w 0.5 / 1 / 2 / 4: {tops}; likelihood alone: {alone}")


MODALS = {"have", "can", "could", "will", "would", "should", "may", "might", "must"}


def type_phrase(question: str) -> str:
    """The words naming the answer's type, as written ("British rock band"), or "": the graph's own rule
    (candidates.answer_type_phrase), also ending at a modal or a verb form ("what river can …", "what British
    rock band released …"), since the phrase is read here as a noun ("X is a British rock band")."""
    words = []
    for w in C.answer_type_phrase(question):
        if w.lower() in MODALS or w.lower().endswith(("ed", "ing")):
            break
        words.append(w)
    return " ".join(words)


def types(data: list, k: int = 5) -> None:
    """Whether the model knows which candidate is of the asked type: "Minneapolis is a city", not "Illinois Tech"."""
    score = policy_scorer()
    rows = []
    for n, (q, golds, _sents, _bridges, cands) in with_candidates(data, k):
        phrase = type_phrase(q["question"])
        if not phrase or C.answer_kind(q["question"]) != "name" or C.asks_nationality(q["question"]):
            continue
        texts = [c.text for c in cands]
        article = "an" if phrase[0].lower() in "aeiou" else "a"
        lik = score([TEMPLATE.format(sentence=c.quote, question=q["question"]) for c in cands], texts)[0]
        typed = score([f"{t} is" for t in texts], [f"{article} {phrase}"] * len(texts))[0]
        rows.append({"y": np.array([normalize_answer(t) in golds for t in texts]),
                     "score": np.array([c.score for c in cands]), "lik": np.array(lik), "type": np.array(typed)})
        if n % 100 == 0:
            print(f"{n}/{len(data)}", flush=True)

    def top1(f) -> int:
        return sum(int(r["y"][int(np.argmax(f(r)))]) for r in rows)

    print(f"{len(rows)} questions naming the answer's type, gold among the {k}: {sum(r['y'].any() for r in rows)}; "
          f"top-1: features {top1(lambda r: r['score'])}, re-ranker {top1(lambda r: r['score'] + r['lik'])}, "
          f"type likelihood alone {top1(lambda r: r['type'])}")
    for w in (0.25, 0.5, 1.0, 2.0):
        print(f"  re-ranker + {w} · type likelihood: {top1(lambda r, w=w: r['score'] + r['lik'] + w * r['type'])}")


def probe(path: Path) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    data = pickle.loads(path.read_bytes())

    def top1(f) -> int:
        return sum(int(d["y"][int(np.argmax(f(d)))]) for d in data)

    print(f"{len(data)} questions, gold among the 5: {sum(d['y'].any() for d in data)}; top-1: features "
          f"{top1(lambda d: d['score'])}, re-ranker (features + likelihood) {top1(lambda d: d['score'] + d['lik'])}")
    for a in (0.25, 0.5, 1.0):
        print(f"  features + likelihood − {a}·no-context likelihood (PMI): "
              f"{top1(lambda d, a=a: d['score'] + d['lik'] - a * d['prior'])}; + {a}·no-context: "
              f"{top1(lambda d, a=a: d['score'] + d['lik'] + a * d['prior'])}")

    def x(d: dict) -> np.ndarray:
        return np.hstack([d["feat"], d["score"][:, None], d["lik"][:, None], d["h_last"].astype(np.float32)])

    for c in (0.01, 0.1, 1.0):
        hits = []
        for seed in range(3):
            n = 0
            for train, test in halves(len(data), seed):
                xs = np.vstack([x(data[i]) for i in train])
                scaler = StandardScaler().fit(xs)
                model = LogisticRegression(C=c, max_iter=2000).fit(
                    scaler.transform(xs), np.concatenate([data[i]["y"] for i in train]))
                n += sum(int(data[i]["y"][int(np.argmax(model.decision_function(scaler.transform(x(data[i])))))])
                         for i in test)
            hits.append(n)
        print(f"  logistic probe over features + likelihood + hidden state, C {c}: top-1 {hits} (3 splits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["coverage", "spans", "gbdt", "linear", "collect", "context", "types", "probe"])
    parser.add_argument("--out", type=Path, help="collect, context: where to write the scores")
    parser.add_argument("--data", type=Path, help="probe: what collect wrote")
    args = parser.parse_args()
    if args.what == "probe":
        if not args.data or not args.data.is_file():
            raise SystemExit("error: probe needs --data FILE (written by collect)")
        return probe(args.data)
    if not (POOL / "questions.jsonl").is_file():
        raise SystemExit(f"error: the pool is not at {POOL}")
    if args.what in ("collect", "context") and not args.out:
        raise SystemExit(f"error: {args.what} needs --out FILE")
    data = questions()
    if args.what in ("collect", "context"):
        return {"collect": collect, "context": context}[args.what](data, args.out)
    {"coverage": coverage, "spans": spans, "gbdt": gbdt, "linear": linear, "types": types}[args.what](data)


if __name__ == "__main__":
    main()
