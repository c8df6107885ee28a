"""Is the evidence *sentence* a decision the 135M model can learn? (session 45, issue 13)

    .venv/bin/python docs/results/sentence-choice-probe/probe.py oracle                  # seconds
    .venv/bin/python docs/results/sentence-choice-probe/probe.py train [--lr 3e-4] [--feature-weight 1]
        [--sentences 8] [--chars 400] [--out DIR]                                         # ~20-30 min

On the pool's free-form *train* questions with simulated evidence (train/simulated_evidence.py; the dev split is
never read). The candidate spans (top 30 by features) come from a few sentences; the features' answer is the
best span of the best sentence. `oracle`: how often the gold is a candidate at all, the features' top 1 and 5,
and the features' best span of the best sentence *that holds the gold* (a perfect sentence choice).

`train`: the sentence as a choice, scored like the answer re-ranker's candidates (train/answer_choice.py) with
the continuation " yes" after a cross-encoder prompt:

    s(sentence) = w · features(its best span) + log π(" yes" | "Question: q\\nSentence: s\\nDoes this sentence
                  answer the question? Answer:")

trained with the same exact choice loss (−log Σ_correct softmax s; a sentence is correct when one of its
candidates is the gold) on the questions after the first 200, which are held out as in
scripts/train_answer_choice.py. Reported on the held-out 200: how often the chosen sentence holds the gold,
and how often its best span (by features) is the gold — the answer this two-stage choice would give.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"
TEMPLATE = "Question: {question}\nSentence: {sentence}\nDoes this sentence answer the question? Answer:"
HELD_OUT = 200


def question_sets(k: int = 30) -> list[tuple[dict, list, set[str], list, list[str]]]:
    """(question, its top-k candidates by features, normalised golds, its evidence sentences, its bridge names)
    for every free-form train question."""
    from deepresearch.agent.graph import candidates as C
    from deepresearch.evals.metrics import normalize_answer
    from deepresearch.train.simulated_evidence import SimulatedSearch, free_form_train_questions

    search = SimulatedSearch(POOL / "corpus.jsonl")
    out = []
    for q in free_form_train_questions(POOL / "questions.jsonl", 0):
        sentences, bridges = search.evidence(q["question"])
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        out.append((q, C.rank_candidates(q["question"], sentences, k=k, bridges=bridges), golds, sentences, bridges))
    return out


def by_sentence(candidates: list, golds: set[str]) -> dict[str, tuple[float, bool, bool]]:
    """Each sentence in order of its best span: (that span's feature score, that span is the gold, some span is)."""
    from deepresearch.evals.metrics import normalize_answer

    out: dict[str, tuple[float, bool, bool]] = {}
    for c in candidates:
        right = normalize_answer(c.text) in golds
        score, first, some = out.get(c.quote, (c.score, right, False))
        out[c.quote] = (score, first, some or right)
    return out


def oracle() -> None:
    from deepresearch.evals.metrics import normalize_answer

    sets = question_sets(k=50)
    covered = top1 = top5 = best_of_gold_sentence = 0
    for _, candidates, golds, _, _ in sets:
        right = [normalize_answer(c.text) in golds for c in candidates]
        covered += any(right)
        top1 += bool(right) and right[0]
        top5 += any(right[:5])
        sentences = by_sentence(candidates, golds)
        best_of_gold_sentence += next((first for _, first, some in sentences.values() if some), False)
    print(f"{len(sets)} free-form train questions: gold among the top 50 spans {covered}, features' top 1 {top1}, "
          f"top 5 {top5}; the best span of the best sentence holding the gold {best_of_gold_sentence}")


def train(args: argparse.Namespace) -> None:
    import torch
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A
    from deepresearch.train.config import LoraSettings
    from deepresearch.train.update import load_policy
    from transformers import PreTrainedTokenizerFast

    sets = []  # (sentence choice, the sentence's best span is the gold, features' top 1 is the gold)
    for q, candidates, golds, _, _ in question_sets():
        if not candidates:
            continue
        sentences = list(by_sentence(candidates, golds).items())[: args.sentences]
        choice = A.ChoiceExample(q["question"], tuple(("yes", s[: args.chars], args.feature_weight * score)
                                                      for s, (score, _, _) in sentences),
                                 tuple(some for _, (_, _, some) in sentences), TEMPLATE)
        sets.append((choice, [first for _, (_, first, _) in sentences], sentences[0][1][1]))
    held, rest = sets[:HELD_OUT], sets[HELD_OUT:]
    print(f"{len(sets)} sets; held out {len(held)}: features' top 1 right {sum(s[2] for s in held)}, a perfect "
          f"sentence choice {sum(any(a and b for a, b in zip(s[0].correct, s[1], strict=True)) for s in held)}, "
          f"gold sentence among {args.sentences}: {sum(any(s[0].correct) for s in held)}; "
          f"train: {sum(s[0].learnable for s in rest)} learnable", flush=True)

    model_dir = embedded_model_dir(load_settings().cache_dir)
    torch.manual_seed(0)
    policy = load_policy(model_dir, LoraSettings(), None, 0)
    scorer = A.ChoiceScorer(policy, PreTrainedTokenizerFast.from_pretrained(str(model_dir)),
                            int(policy.config.pad_token_id or 0))
    policy.eval()
    start = time.perf_counter()

    def measure(tag: str) -> None:
        holds = answers = 0
        with torch.no_grad():
            for choice, first_right, _ in held:
                i = int(torch.argmax(scorer.scores(choice)))
                holds, answers = holds + choice.correct[i], answers + first_right[i]
        print(f"{tag}: the chosen sentence holds the gold {holds}/{len(held)}, its best span is the gold {answers} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)

    def progress(seen: int, total: int, loss: float) -> None:
        if seen % 40 < 4:
            print(f"  {seen}/{total} questions, loss {loss:.3f}, {time.perf_counter() - start:.0f} s", flush=True)

    def epoch_end(epoch: int) -> None:
        measure(f"epoch {epoch}")
        if args.out:
            policy.save_pretrained(str(args.out / f"epoch-{epoch}"))

    measure("base")
    A.train_choice(scorer, [s[0] for s in rest], lr=args.lr, epochs=args.epochs, progress=progress,
                   epoch_end=epoch_end)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["oracle", "train"])
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--feature-weight", type=float, default=1.0)
    parser.add_argument("--sentences", type=int, default=8, help="sentences offered per question")
    parser.add_argument("--chars", type=int, default=400, help="each sentence cut to this many characters")
    parser.add_argument("--out", type=Path, help="save the adapter after every pass here")
    args = parser.parse_args()
    oracle() if args.what == "oracle" else train(args)


if __name__ == "__main__":
    main()
