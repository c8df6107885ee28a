"""Train the answer re-ranker's adapter on pool *train* questions (train/answer_choice.py), and measure it.

    .venv/bin/python scripts/train_answer_choice.py --out /tmp/answer-choice [--limit 1200] [--epochs 1]

Questions and corpus: ../shared/data/pool beside the repository, else the bundled demo set (--questions/--corpus).

1. Free-form train questions (not yes/no, not "A or B"; shuffled with --seed), their evidence simulated as
   the graph gathers it (train/simulated_evidence.py) and their top --candidates spans by features: the
   re-ranker's pool (setting agent.answer_pool). --source keeps one source dataset's questions.
2. The first --held-out questions are only measured: top-1 (the re-ranker's pick is correct) for the base
   model, then for the adapter (--held-out 0: every question trains, nothing is measured here). The rest
   train it: −log Σ_correct softmax(s), --epochs passes.
   --positives-from N: a training set whose pool misses the gold gets the best correct span of the top N as
   one more candidate (session 36: held-out top-1 31 / 30 after passes 1 / 2, against 32 / 30 without: no gain).
   --bridges: the follow-up hop's bridge names of the same questions train the same adapter
   (train/bridge_examples.py; session 43: held-out hops that find a new gold document 31 by features, 50 trained).
   --train-seed N: the adapter's init and training order only, so the same questions train (and are held out)
   another adapter (session 46: three such adapters, averaged, in docs/results/adapter-soup/).
   --credit f1: a candidate earns its token F1 against the gold instead of 1 / 0 (train/answer_choice.py), so
   sets whose pool holds part of the gold train too. The held-out pick is reported by EM and by F1 either way.
3. Writes OUT/adapter (peft files + metadata.json scoped to the re-ranker's role, and `bridge` with --bridges) and
   OUT/summary.json; with more than one epoch, also OUT/epoch-N/adapter and the held-out top-1 after every pass.
   The dev split is never read: `deepresearch eval --adapter OUT/adapter` measures it on dev questions.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
POOL = Path(__file__).resolve().parents[2] / "shared/data/pool"


@functools.cache
def simulated_search(corpus: Path):
    """The corpus indexed once per process (the answer and the bridge sets search the same one)."""
    from deepresearch.train.choice.simulated_evidence import SimulatedSearch

    return SimulatedSearch(corpus)


def examples(questions: Path, corpus: Path, limit: int, k: int, seed: int, sources: list[str] | None = None,
             positives_from: int = 0, plain: int = 0, credit: str = "exact") -> list:
    """One ChoiceExample per question with candidates: the top k spans by features. With `positives_from`
    N > k, every set after the first `plain` (the held-out ones) whose k spans miss the gold also gets the
    best-ranked correct span of the top N, as a k+1-th candidate. `credit` "f1" grades each candidate by
    its token F1 against the gold."""
    from deepresearch.agent.graph import candidates as C
    from deepresearch.train.choice.answer_choice import ChoiceExample
    from deepresearch.train.choice.simulated_evidence import free_form_train_questions

    chosen = free_form_train_questions(questions, seed, sources)[:limit]
    if not chosen:  # indexing the corpus takes seconds: not for a --source with no questions
        return []
    search = simulated_search(corpus)
    out = []
    for q in chosen:
        sents, bridges = search.evidence(q["question"])
        golds = [q["answer"], *q.get("answer_aliases", [])]
        ranked = C.rank_candidates(q["question"], sents, k=max(k, positives_from), bridges=bridges)
        pool = ranked[:k]
        correct = ChoiceExample.of(q["question"], ranked, golds).correct
        if positives_from > k and len(out) >= plain and not any(correct[:k]) and any(correct):
            pool.append(ranked[correct.index(True)])  # the best-ranked correct span below the pool
        if pool:
            out.append(ChoiceExample.of(q["question"], pool, golds, credit))
    return out


def bridge_sets(questions: Path, corpus: Path, limit: int, seed: int, sources: list[str] | None,
                held_out: set[str]) -> tuple[list, list]:
    """(held-out, train) bridge sets (train/bridge_examples.py) of the same questions as the answer sets:
    a question held out there is held out here."""
    from deepresearch.train.choice.bridge_examples import bridge_example
    from deepresearch.train.choice.simulated_evidence import free_form_train_questions

    search = simulated_search(corpus)
    sets = [ex for q in free_form_train_questions(questions, seed, sources)[:limit]
            if (ex := bridge_example(search, q["question"], q.get("gold_doc_ids", [])))]
    return [ex for ex in sets if ex.question in held_out], [ex for ex in sets if ex.question not in held_out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from deepresearch.app.settings import load_settings
    from deepresearch.app.settings_sources import SettingsError
    from deepresearch.evals.dataset import bundled_dataset

    try:
        settings = load_settings()
    except SettingsError as exc:
        sys.exit(f"error: {exc}")
    # The pool beside the repository, else the bundled demo set (a fresh clone has no ../shared).
    questions, corpus = ((POOL / "questions.jsonl", POOL / "corpus.jsonl") if (POOL / "questions.jsonl").is_file()
                         else bundled_dataset("demo"))
    parser.add_argument("--questions", type=Path, default=questions)
    parser.add_argument("--corpus", type=Path, default=corpus)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=1200, help="train questions read (held-out ones included)")
    parser.add_argument("--held-out", type=int, default=100)
    parser.add_argument("--candidates", type=int, default=settings.agent.answer_pool,
                        help="the re-ranker's pool (default: the graph's, setting agent.answer_pool)")
    parser.add_argument("--positives-from", type=int, default=0, metavar="N",
                        help="training sets whose pool lacks the gold get it from the top N spans as one more "
                             "candidate (0: off; held-out sets never do)")
    parser.add_argument("--bridges", action="store_true",
                        help="also train the follow-up hop's bridge choice (agent/graph/bridge_scoring.py) on the "
                             "same questions; the adapter then answers for both roles")
    parser.add_argument("--credit", choices=("exact", "f1"), default="exact",
                        help="what a training candidate earns: 1 if it is the gold, else 0 (exact; default), or its "
                             "token F1 against the gold (f1)")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="the question order, so which questions are held out")
    parser.add_argument("--train-seed", type=int, default=None,
                        help="the adapter's init and the training order (default: --seed); another value trains "
                             "another adapter on the same questions, with the same ones held out")
    parser.add_argument("--source", action="append", dest="sources", metavar="NAME",
                        help="train (and hold out) questions of this source dataset only, e.g. hotpotqa; "
                             "repeatable. The other sources' dev questions are then a slice it never saw")
    args = parser.parse_args()
    for path in (args.questions, args.corpus):
        if not path.is_file():
            sys.exit(f"error: {path} not found (pass --questions/--corpus)")
    if args.limit <= args.held_out or args.held_out < 0 or args.candidates < 2 or args.epochs < 1:
        sys.exit("error: need --limit > --held-out ≥ 0, --candidates ≥ 2 and --epochs ≥ 1")
    if args.positives_from and args.positives_from <= args.candidates:
        sys.exit(f"error: --positives-from must be 0 (off) or more than --candidates ({args.candidates})")

    from deepresearch.agent.graph.answer_scoring import ANSWER_ROLE
    from deepresearch.agent.graph.bridge_scoring import BRIDGE_ROLE
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.train import answer_choice as A

    start = time.perf_counter()
    # graded by F1 throughout, so the held-out pick's F1 can be read; the training sets keep it only with --credit f1
    data = examples(args.questions, args.corpus, args.limit, args.candidates, args.seed, args.sources,
                    args.positives_from, args.held_out, credit="f1")
    if len(data) <= args.held_out:
        sources = f" of source {', '.join(args.sources)}" if args.sources else ""
        sys.exit(f"error: {len(data)} free-form train questions with candidates{sources}; "
                 f"need more than --held-out {args.held_out}")
    held_out, train = data[: args.held_out], data[args.held_out:]
    if args.credit == "exact":
        train = [dataclasses.replace(ex, credit=None) for ex in train]
    print(f"{len(data)} questions with candidates ({time.perf_counter() - start:.0f} s); held out {len(held_out)}, "
          f"{sum(ex.correct[0] for ex in held_out)} right by features alone; "
          f"train {len(train)}, {sum(ex.learnable for ex in train)} with "
          f"{'a candidate of some F1' if args.credit == 'f1' else 'a correct candidate'}", flush=True)
    bridges_held, bridges_train = (bridge_sets(args.questions, args.corpus, args.limit, args.seed, args.sources,
                                               {ex.question for ex in held_out}) if args.bridges else ([], []))
    if args.bridges:
        print(f"bridge sets: held out {len(bridges_held)}, the features' name leads on for "
              f"{sum(ex.correct[0] for ex in bridges_held)}, some name for "
              f"{sum(any(ex.correct) for ex in bridges_held)}; "
              f"train {len(bridges_train)}, {sum(ex.learnable for ex in bridges_train)} where a name leads on",
              flush=True)

    roles = (ANSWER_ROLE, BRIDGE_ROLE) if args.bridges else (ANSWER_ROLE,)
    model_dir = embedded_model_dir(settings.cache_dir)
    train_seed = args.seed if args.train_seed is None else args.train_seed
    scorer = A.ChoiceScorer.load(model_dir, seed=train_seed)
    policy = scorer.policy

    bridge_top1: list[int] = []  # held-out bridge top-1, base then after every pass
    top1_f1: list[float] = []  # held-out summed F1 of the pick, base then after every pass

    def measure() -> int | None:
        if bridges_held:
            bridge_top1.append(A.top1_hits(scorer, bridges_held))
            print(f"  bridge top-1 {bridge_top1[-1]}/{len(bridges_held)}", flush=True)
        if not held_out:
            return None
        picked = A.top1_rewards(scorer, held_out)
        top1_f1.append(round(sum(picked), 2))
        return A.top1_hits(scorer, held_out)

    def top1(hits: int | None) -> str:
        return (f"top-1 {hits}/{len(held_out)} (F1 {top1_f1[-1]:.1f})" if held_out
                else "top-1 not measured (--held-out 0)")

    base = measure()
    print(f"base: {top1(base)}", flush=True)

    def progress(seen: int, total: int, loss: float) -> None:
        if seen % 40 < args.batch:
            print(f"  {seen}/{total} questions, loss {loss:.3f}, {time.perf_counter() - start:.0f} s", flush=True)

    per_epoch: dict[int, int | None] = {}

    def epoch_end(epoch: int) -> None:
        per_epoch[epoch] = measure()
        print(f"epoch {epoch}: {top1(per_epoch[epoch])} ({time.perf_counter() - start:.0f} s)", flush=True)
        if epoch < args.epochs:
            A.save_choice_adapter(policy, args.out / f"epoch-{epoch}" / "adapter",
                                  {"trainer": "answer-choice", "epoch": epoch, "top1_held_out": per_epoch[epoch]},
                                  roles)

    stats = A.train_choice(scorer, train + bridges_train, lr=args.lr, batch=args.batch, epochs=args.epochs,
                           seed=train_seed, progress=progress, epoch_end=epoch_end)
    trained = per_epoch[args.epochs]
    print(f"trained: {top1(trained)} ({stats.steps} steps, {stats.seconds:.0f} s)", flush=True)
    summary = {"command": " ".join([sys.executable, *sys.argv]), "settings": vars(args) | {
        "questions": str(args.questions), "corpus": str(args.corpus), "out": str(args.out)},
        "held_out": len(held_out), "top1_base": base, "top1_trained": trained, "top1_per_epoch": per_epoch,
        "top1_f1_per_measure": top1_f1,
        "train_questions": len(train), "learnable": stats.examples, "steps": stats.steps,
        "final_loss": stats.loss, "train_seconds": stats.seconds}
    if args.bridges:
        summary |= {"bridge_held_out": len(bridges_held), "bridge_top1_features": sum(
            ex.correct[0] for ex in bridges_held), "bridge_top1_per_measure": bridge_top1,
            "bridge_train_learnable": sum(ex.learnable for ex in bridges_train)}

    A.save_choice_adapter(policy, args.out / "adapter", {"trainer": "answer-choice", **summary}, roles)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"wrote {args.out / 'adapter'} and {args.out / 'summary.json'}")


if __name__ == "__main__":
    main()
