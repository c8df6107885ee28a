"""Synthesize a question set from a corpus: held-out documents chosen, candidates of every kind made and filtered
until each kind's quota is kept, a dev split taken from every kind, and the served corpus written without the
held-out documents.

    synth = synthesize(corpus, settings)         # deterministic for a corpus and settings
    paths = synth.write(directory, corpus)       # questions.jsonl (evals format), served.jsonl, synth.json
    synth.train_questions(), synth.dev_questions()
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Iterator
from itertools import islice
from pathlib import Path

from deepresearch.evals.scoring.metrics import answer_in_text
from pydantic import BaseModel, Field

from ..config import SynthSettings
from ..rounds.questions import TrainQuestion
from .candidates import FactBook, comparisons, facts_of, one_hop, two_hop, unanswerable
from .corpus import SynthCorpus
from .filters import KINDS, Candidate, FilterStats, QuestionFilter, question_id

QUESTIONS_FILE, SERVED_FILE, SUMMARY_FILE = "questions.jsonl", "served.jsonl", "synth.json"
# How many candidates a kind may be made from per question it keeps: a corpus that yields none stops early.
CANDIDATES_PER_KEPT = 25


class SynthQuestion(BaseModel):
    id: str
    question: str
    answer: str
    answer_aliases: list[str] = Field(default_factory=list)
    gold_doc_ids: list[str] = Field(default_factory=list)
    split: str = "train"
    type: str  # the kind: one_hop, two_hop, comparison, unanswerable
    template: str = ""
    frame: str = ""
    held_out_answer: str = ""
    sources: list[str] = Field(default_factory=list)

    def train_question(self) -> TrainQuestion:
        return TrainQuestion(id=self.id, question=self.question, answer=self.answer,
                             answer_aliases=self.answer_aliases, gold_doc_ids=self.gold_doc_ids, kind=self.type)


class SynthPaths(BaseModel):
    questions: Path
    served: Path
    summary: Path


class SynthSet(BaseModel):
    questions: list[SynthQuestion] = Field(default_factory=list)
    held_out: list[str] = Field(default_factory=list)
    stats: FilterStats = Field(default_factory=FilterStats)
    corpus: str = ""  # the corpus's fingerprint
    documents: int = 0
    seconds: float = 0.0

    def split(self, name: str) -> list[SynthQuestion]:
        return [q for q in self.questions if q.split == name]

    def train_questions(self) -> list[TrainQuestion]:
        return [q.train_question() for q in self.split("train")]

    def dev_questions(self) -> list[TrainQuestion]:
        return [q.train_question() for q in self.split("dev")]

    def line(self) -> str:
        """What was made and kept, in one line (the round log repeats the kinds each round used)."""
        parts = [f"{self.stats.kept.get(k, 0)}/{self.stats.made.get(k, 0)} {k}" for k in KINDS
                 if self.stats.made.get(k)]
        dev = len(self.split("dev"))
        return (f"synthesized from {self.documents} documents ({len(self.held_out)} held out for unanswerable ones) "
                f"in {self.seconds:.0f} s: kept/made {', '.join(parts) or 'nothing'}; {len(self.questions) - dev} "
                f"train + {dev} dev questions")

    def write(self, directory: Path, corpus: SynthCorpus) -> SynthPaths:
        """The questions (evals format, a `split` and a `type` each), the served corpus and this summary."""
        directory.mkdir(parents=True, exist_ok=True)
        paths = SynthPaths(questions=directory / QUESTIONS_FILE, served=directory / SERVED_FILE,
                           summary=directory / SUMMARY_FILE)
        paths.questions.write_text("".join(q.model_dump_json() + "\n" for q in self.questions), encoding="utf-8")
        corpus.write_jsonl(paths.served, leave_out=self.held_out)
        paths.summary.write_text(self.model_dump_json(exclude={"questions"}, indent=1), encoding="utf-8")
        return paths

    @classmethod
    def read(cls, directory: Path) -> SynthSet | None:
        """A set written before (None when there is none, or it is incomplete)."""
        summary, questions = directory / SUMMARY_FILE, directory / QUESTIONS_FILE
        if not (summary.is_file() and questions.is_file() and (directory / SERVED_FILE).is_file()):
            return None
        out = cls.model_validate(json.loads(summary.read_text(encoding="utf-8")))
        out.questions = [SynthQuestion.model_validate_json(line) for line in
                         questions.read_text(encoding="utf-8").splitlines() if line.strip()]
        return out


def quotas(settings: SynthSettings) -> dict[str, int]:
    total = sum(settings.shares.get(k, 0.0) for k in KINDS) or 1.0
    return {k: round(settings.questions * settings.shares.get(k, 0.0) / total) for k in KINDS}


def _held_out(book: FactBook, order: list[str], wanted: int, answered: Callable[[str, str, set[str]], bool],
              probe: int = 200) -> list[str]:
    """The first `wanted` documents (in the seeded order, of the first `probe`) with a fact the rest of the corpus does
    not answer (`answered(question, answer, left_out)`): their facts make the unanswerable questions."""
    held: list[str] = []
    for doc_id in order[:probe]:
        if len(held) >= wanted:
            break
        if any(not answered(f.question, f.answer, {*held, doc_id}) for f in book.facts(doc_id)[:8]):
            held.append(doc_id)
    return held


def _take(candidates: Iterator[Candidate], keep: QuestionFilter, quota: int) -> list[Candidate]:
    kept: list[Candidate] = []
    for candidate in islice(candidates, max(quota, 1) * CANDIDATES_PER_KEPT):
        kept += keep.keep([candidate])
        if len(kept) >= quota:
            break
    return kept


def synthesize(corpus: SynthCorpus, settings: SynthSettings) -> SynthSet:
    """Questions with known answers from `corpus`'s documents alone (deterministic for a corpus and settings)."""
    start = time.perf_counter()
    rng = random.Random(settings.seed)
    order = list(corpus.docs)
    rng.shuffle(order)
    quota = quotas(settings)
    wanted = 0
    if quota["unanswerable"] and len(order) >= 4:
        wanted = max(1, min(round(settings.held_out_share * len(order)), quota["unanswerable"]))
    def text_of(doc_id: str) -> str:
        doc = corpus.get(doc_id)
        return f"{doc.title}\n{doc.text}" if doc is not None else ""

    def search_without(query: str, k: int, left_out: set[str]) -> list[str]:
        return [d for d in corpus.search(query, k + len(left_out)) if d not in left_out][:k]

    def answered(question: str, answer: str, left_out: set[str]) -> bool:
        return any(answer_in_text([text_of(d)], [answer]) for d in search_without(question, settings.search_k,
                                                                                   left_out))

    book = FactBook(corpus, rng)
    held = _held_out(book, order, wanted, answered)
    book.serve([d for d in order if d not in set(held)][: settings.max_scan_docs], set(held))

    def served_search(query: str, k: int) -> list[str]:
        return search_without(query, k, set(held))

    per_opening = max(1, math.ceil(settings.opening_share * settings.questions)) if settings.opening_share < 1 \
        else None
    keep = QuestionFilter(corpus.search, settings.search_k, settings.max_overlap, served_search, text_of, per_opening)
    made: dict[str, list[Candidate]] = {}
    made["two_hop"] = _take(two_hop(book), keep, quota["two_hop"])
    made["comparison"] = _take(comparisons(book), keep, quota["comparison"])
    made["unanswerable"] = _take(unanswerable(book, held), keep, quota["unanswerable"])
    # What the other kinds could not fill, one-hop questions fill.
    rest = sum(quota.values()) - sum(len(v) for k, v in made.items())
    made["one_hop"] = _take(one_hop(book), keep, rest)
    stats = keep.stats
    questions: list[SynthQuestion] = []
    for kind in KINDS:
        items = made.get(kind, [])
        stats.used[kind] = len(items)
        dev = round(settings.dev_share * len(items)) if len(items) >= 3 else 0
        dev = max(dev, 1) if settings.dev_share > 0 and len(items) >= 3 else dev
        for i, c in enumerate(items):
            questions.append(SynthQuestion(
                id=question_id(c), question=c.question, answer=c.answer, gold_doc_ids=c.gold_doc_ids,
                split="dev" if i < dev else "train", type=c.kind, template=c.template, frame=c.frame,
                held_out_answer=c.held_out_answer, sources=c.sources))
    return SynthSet(questions=questions, held_out=held, stats=stats, corpus=corpus.fingerprint(),
                    documents=len(corpus), seconds=time.perf_counter() - start)


@functools.cache
def code_fingerprint() -> str:
    """The synthesizer's own code and the reader's it reads documents with (train/synth, agent/reader): a set made by
    other code is made again, not reused (a set kept across an upgrade held the old rules' questions)."""
    from deepresearch.agent import reader

    digest = hashlib.sha1()
    for package in (Path(__file__).parent, Path(reader.__file__).parent):
        for path in sorted(package.rglob("*.py")):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:8]


def synth_dir(root: Path, corpus: SynthCorpus, settings: SynthSettings) -> Path:
    """Where a corpus's set for these settings and this code is kept: the same corpus, settings and code reuse it
    (`--resume`)."""
    made_by = hashlib.sha1(f"{settings.model_dump_json()} {code_fingerprint()}".encode()).hexdigest()[:8]
    return root / f"{corpus.fingerprint()}-{made_by}"


def synthesized(root: Path, corpus: SynthCorpus, settings: SynthSettings) -> tuple[SynthSet, SynthPaths]:
    """The corpus's set, made once and reused after (written under `root`)."""
    directory = synth_dir(root, corpus, settings)
    found = SynthSet.read(directory)
    if found is not None:
        return found, SynthPaths(questions=directory / QUESTIONS_FILE, served=directory / SERVED_FILE,
                                 summary=directory / SUMMARY_FILE)
    made = synthesize(corpus, settings)
    return made, made.write(directory, corpus)


__all__ = ["SynthQuestion", "SynthSet", "synthesize", "synthesized", "facts_of"]
