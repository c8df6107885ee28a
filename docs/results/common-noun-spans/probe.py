"""How many of the golds no span reaches are common nouns, and could a lowercase-phrase rule reach them?

    .venv/bin/python docs/results/common-noun-spans/probe.py --split train

Pool questions of one split, free-form only; evidence = the gold documents alone (as span_ceiling.py). For the
golds that are no span of `rank_candidates` there, it counts where the gold stands in the text:
  - verbatim: the normalised gold is a run of words of some sentence;
  - lowercase: that run is written without a capital letter ("played as a goalkeeper");
and whether a rule that proposes every run of 1-3 lowercase words (first and last no stop word) would hold it,
with how many such phrases a question's gold documents give (what the re-ranker would have to sort through).
It also counts the questions the rule would be routed to: "what/which" before one of 40 class nouns (sport,
position, type, ...; CLASS_Q), and how many of those have a lowercase gold.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
from pathlib import Path

from deepresearch.agent.graph.answer_form import answer_choices
from deepresearch.agent.graph.candidates import STOP_WORDS, EvidenceSentence, rank_candidates
from deepresearch.agent.graph.reading import split_sentences
from deepresearch.evals.metrics import normalize_answer

POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"
LOWER_WORD = re.compile(r"[a-z][a-z0-9'’\-]*")
TOKEN = re.compile(r"\S+")
# "what sport", "which position", "what kind of", "what type of": a class, not a name
CLASS_Q = re.compile(r"\b(what|which)\s+(kind|type|sort|form|genre|sport|position|profession|occupation|role|"
                     r"part|instrument|species|animal|breed|style|field|title|rank|award|religion|language|"
                     r"material|disease|product|products|game|event|activity|endeavor|business|industry|"
                     r"job|career|crime|weapon|vehicle|device|century|decade)\b", re.IGNORECASE)


def lowercase_phrases(sentence: str, longest: int = 3) -> set[str]:
    """Every run of 1..longest words written in lowercase, first and last no stop word, normalised."""
    out: set[str] = set()
    words = [w.strip(".,;:()\"'“”") for w in TOKEN.findall(sentence)]
    run: list[str] = []
    for w in [*words, "X"]:  # a capitalised sentinel ends the last run
        if w and LOWER_WORD.fullmatch(w):
            run.append(w)
            continue
        for i in range(len(run)):
            for j in range(i + 1, min(len(run), i + longest) + 1):
                part = run[i:j]
                if part[0] not in STOP_WORDS and part[-1] not in STOP_WORDS:
                    out.add(normalize_answer(" ".join(part)))
        run = []
    return out


def main(args: argparse.Namespace) -> None:
    corpus = {d["id"]: d for d in map(json.loads, (POOL / "corpus.jsonl").open())}
    questions = [q for q in map(json.loads, (POOL / "questions.jsonl").open())
                 if q["split"] == args.split and answer_choices(q["question"]) is None]
    counts: collections.Counter[str] = collections.Counter()
    phrases_per_q: list[int] = []
    examples: list[str] = []
    for q in questions:
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        texts = [t for doc in q["gold_doc_ids"] for t in split_sentences(corpus[doc]["text"])]
        sentences = [EvidenceSentence(t, 0, "", False, "doc", position=i) for i, t in enumerate(texts)]
        routed = CLASS_Q.search(q["question"]) is not None
        counts["routed"] += routed
        if any(normalize_answer(c.text) in golds for c in rank_candidates(q["question"], sentences, k=1000)):
            continue
        counts["no span"] += 1
        verbatim = [t for t in texts if any(f" {g} " in f" {normalize_answer(t)} " for g in golds)]
        if not verbatim:
            continue
        counts["verbatim"] += 1
        # the normalised gold is lowercase: found case-sensitively, it is written without a capital
        lower = any(re.search(rf"(?<!\w){re.escape(g)}(?!\w)", t) for g in golds for t in verbatim)
        if not lower:
            continue
        counts["lowercase"] += 1
        counts["lowercase, routed"] += routed
        phrases = set().union(*(lowercase_phrases(t) for t in texts))
        if golds & phrases:
            counts["held by the rule"] += 1
            counts["held by the rule, routed"] += routed
            phrases_per_q.append(len(phrases))
            if len(examples) < args.examples:
                examples.append(f"{q['question'][:90]!r} gold {q['answer']!r} (routed {routed})")
    total = len(questions)
    print(f"{args.split}: {total} free-form questions")
    for name in ("no span", "verbatim", "lowercase", "lowercase, routed", "held by the rule",
                 "held by the rule, routed", "routed"):
        print(f"  {name:26s} {counts[name]:4d}  ({counts[name] / total:.1%})")
    if phrases_per_q:
        print(f"  lowercase phrases per question where the rule holds the gold: median "
              f"{statistics.median(phrases_per_q):.0f}, max {max(phrases_per_q)}")
    print(f"\nfirst {len(examples)} golds the rule would hold:")
    for line in examples:
        print("  " + line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="train", choices=["dev", "train"])
    parser.add_argument("--examples", type=int, default=30)
    main(parser.parse_args())
