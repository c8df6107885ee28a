"""Who should phrase a synthesized one-hop question: the templates (train/synth/prose.py, tables.py) or the policy
model under a grammar (train/synth/model_writer.py)? Both phrase the same facts; the same filters judge both.

    nice -n 15 .venv/bin/python scripts/synth_writer_probe.py --corpus ../shared/data/pool/corpus.jsonl --facts 80
    nice -n 15 .venv/bin/python scripts/synth_writer_probe.py --corpus ../shared/data/userdocs/docs --facts 80

For each writer: how many questions it wrote, how many each filter dropped (filters.py), how many were kept, and
on the kept ones a round trip through the reader: the rules' answer options (agent/reader, features only, no model)
over the source document's units, with the question asked, and whether the fact's answer is the top option or among
the top 5. A question that asks for its answer clearly lets the reader find it in its own source. Only documents
are read (a corpus file's `id`, `title`, `text`, or a folder's files): never a question set.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from itertools import islice
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a corpus jsonl or a folder of documents")
    parser.add_argument("--facts", type=int, default=80, help="facts phrased by each writer")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="write probe.json here")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(probe(args.corpus, args.facts, args.seed, args.out)), indent=1))


def round_trip(question: str, answer: str, doc, unit_text: str) -> tuple[bool, bool]:
    """Is the answer the reader's first option, and among its first five, for this question over its document?"""
    from deepresearch.agent.reader import EvidenceSentence, answer_options, normalise

    units = doc.units()
    evidence = [EvidenceSentence(u.text, 0, doc.title, position=i, kind=u.kind, header=u.header, heading=u.heading,
                                 key=u.key) for i, u in enumerate(units)]
    offered = [normalise(c) for c in answer_options(question, evidence, pool=5).offered]
    gold = normalise(answer)
    return bool(offered) and offered[0] == gold, gold in offered


async def probe(path: Path, n: int, seed: int, out: Path | None) -> dict:
    from deepresearch.app.runtime import build_model_from
    from deepresearch.app.settings import get_settings
    from deepresearch.train.synth.candidates import FactBook, interleaved
    from deepresearch.train.synth.corpus import SynthCorpus
    from deepresearch.train.synth.filters import Candidate, QuestionFilter, tidy
    from deepresearch.train.synth.model_writer import model_questions

    corpus = SynthCorpus.from_path(path)
    try:
        book = FactBook(corpus, random.Random(seed))
        order = list(corpus.docs)
        random.Random(seed).shuffle(order)
        book.serve(order[:2000], set())
        facts = list(islice(interleaved(book, book.scan), n))
        settings = get_settings()
        model = build_model_from(settings.model_copy(update={"model": settings.model.model_copy(
            update={"adapter": None})}))
        start = time.perf_counter()
        try:
            written = await model_questions(model, facts)
        finally:
            await model.close()
        model_seconds = time.perf_counter() - start
        report: dict = {"corpus": str(path), "documents": len(corpus), "facts": len(facts),
                        "model_seconds": round(model_seconds, 1), "writers": {}}
        for writer, texts in (("template", [f.question for f in facts]), ("model", written)):
            keep = QuestionFilter(corpus.search, 5, 0.5)
            kept, top1, top5, samples = 0, 0, 0, []
            for fact, text in zip(facts, texts, strict=True):
                if text is None:
                    continue
                c = Candidate(kind="one_hop", question=tidy(text), answer=fact.answer, answer_kind=fact.kind,
                              gold_doc_ids=[fact.doc_id], sources=[fact.unit], must_find=[(tidy(text), fact.doc_id)])
                was_kept = bool(keep.keep([c]))
                if was_kept:
                    kept += 1
                    first, five = round_trip(c.question, fact.answer, corpus.get(fact.doc_id), fact.unit)
                    top1, top5 = top1 + first, top5 + five
                if len(samples) < 12:
                    samples.append({"question": text, "answer": fact.answer, "unit": fact.unit[:160],
                                    "kept": was_kept})
            report["writers"][writer] = {
                "written": sum(t is not None for t in texts), "dropped": keep.stats.dropped.get("one_hop", {}),
                "kept": kept, "reader_top1": top1, "reader_top5": top5, "samples": samples,
            }
    finally:
        corpus.close()
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "probe.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
