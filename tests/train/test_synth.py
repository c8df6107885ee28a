"""Questions synthesized from documents (train/synth/): real files read as `deepresearch index` reads them, the real
reader's units and spans, the real BM25 search; what each kind looks like and what every kept question satisfies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.agent.reader import normalise
from deepresearch.evals.scoring.metrics import answer_in_text
from deepresearch.train.config import RewardSettings, SynthSettings
from deepresearch.train.synth.candidates import facts_of
from deepresearch.train.synth.corpus import SynthCorpus, SynthDoc
from deepresearch.train.synth.filters import Candidate, QuestionFilter, opening, overlap
from deepresearch.train.synth.prose import lemma
from deepresearch.train.synth.synthesize import SynthSet, synthesize, synthesized

from .synth_docs import write_docs

SETTINGS = SynthSettings(questions=24)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> SynthCorpus:
    docs = SynthCorpus.from_path(write_docs(tmp_path_factory.mktemp("docs")))
    yield docs
    docs.close()


@pytest.fixture(scope="module")
def made(corpus) -> SynthSet:
    return synthesize(corpus, SETTINGS)


def questions_of(corpus: SynthCorpus, name: str) -> dict[str, str]:
    doc = next(d for d in corpus if d.id.endswith(name))
    return {f.question: f.answer for f in facts_of(doc)}


def test_one_hop_questions_of_a_table_row_a_field_a_note_and_prose(corpus):
    assert questions_of(corpus, "boards.csv")["How much is the price gbp of Jaques Club in boards?"] == "120.00"
    assert questions_of(corpus, "boards.csv")["What date is given as the bought of Tournament Roll in boards?"] \
        == "2023-01-15"
    minutes = questions_of(corpus, "minutes.md")
    assert minutes["Who is the treasurer in Riverside Chess Club – committee meeting?"] == "Omar Quist"
    assert minutes["How much is the deposit in Boards on loan?"] == "£15"
    behn = questions_of(corpus, "Aphra Behn.md")
    assert behn["When was Aphra Behn born?"] == "10 December 1640"  # "Name (date – date)"
    assert behn["When did Aphra Behn die?"] == "16 April 1689"
    assert behn["Where was Aphra Behn buried?"] == "Westminster Abbey"  # "She was buried in …": she = the page
    theatre = questions_of(corpus, "Dorset Garden Theatre.md")
    assert theatre["Who designed Dorset Garden Theatre?"] == "Christopher Wren"  # passive "by" turned active
    assert theatre["In what year was Dorset Garden Theatre opened?"] == "1671"
    assert questions_of(corpus, "Thomas Killigrew.md")["In what year did Thomas Killigrew found the King's Company?"] \
        == "1660"


def test_lemmas_of_past_tenses():
    assert [lemma(w) for w in ("died", "formed", "released", "moved", "planned", "studied", "created", "won")] == \
        ["die", "form", "release", "move", "plan", "study", "create", "win"]


def test_every_kind_is_made_and_kept_questions_hold_what_the_filters_promise(corpus, made):
    kinds = {q.type for q in made.questions}
    assert kinds == {"one_hop", "two_hop", "comparison", "unanswerable"}, made.stats.table()
    served = {d for d in corpus.docs if d not in made.held_out}
    for q in made.questions:
        if q.type == "unanswerable":
            assert q.answer == "not found" and not q.gold_doc_ids
            assert q.held_out_answer in q.sources[0]
            assert not answer_in_text([q.question], [q.held_out_answer])
            top = [d for d in corpus.search(q.question, 5 + len(made.held_out)) if d in served][:5]
            assert not any(answer_in_text([corpus.get(d).text], [q.held_out_answer]) for d in top)
            continue
        assert set(q.gold_doc_ids) <= served  # no answerable question needs a held-out document
        assert all(overlap(q.question, s) <= SETTINGS.max_overlap for s in q.sources)
        if q.type == "comparison":
            assert q.answer in q.question  # one of the two names asked about
        else:
            assert any(q.answer in source for source in q.sources), q  # a span of its source, verbatim
            assert not answer_in_text([q.question], [q.answer]), q
        if q.type == "one_hop":
            assert q.gold_doc_ids[0] in corpus.search(q.question, SETTINGS.search_k)


def test_two_hop_chains_and_comparisons(made):
    by_question = {q.question: q for q in made.questions}
    assert by_question["Where was the writer of The Rover buried?"].answer == "Westminster Abbey"
    hop = by_question["Where was the writer of The Rover buried?"]
    assert [Path(d).name for d in hop.gold_doc_ids] == ["The Rover.md", "Aphra Behn.md"]
    comparisons = [q for q in made.questions if q.type == "comparison"]
    born = next(q for q in comparisons if q.question.startswith("Who was born first"))
    expected = {"Thomas Killigrew": 1612, "William Wycherley": 1641, "Aphra Behn": 1640}
    names = [n for n in expected if n in born.question]
    assert born.answer == min(names, key=expected.get)


def test_the_held_out_source_is_not_served_and_a_dev_split_is_taken_from_every_kind(tmp_path, corpus, made):
    paths = made.write(tmp_path / "set", corpus)
    served = [json.loads(line)["id"] for line in paths.served.read_text().splitlines()]
    assert made.held_out and not set(made.held_out) & set(served)
    assert len(served) == len(corpus) - len(made.held_out)
    rows = [json.loads(line) for line in paths.questions.read_text().splitlines()]
    assert {r["split"] for r in rows} == {"train", "dev"}
    assert len({r["id"] for r in rows}) == len(rows)
    from deepresearch.evals.data.dataset import load_questions

    assert len(load_questions(paths.questions)) == len(rows)  # the evals runner (the gate) reads it
    train_ids = {q.id for q in made.train_questions()}
    assert train_ids.isdisjoint(q.id for q in made.dev_questions())
    assert {q.kind for q in made.train_questions()} <= {"one_hop", "two_hop", "comparison", "unanswerable"}


def test_the_same_documents_give_the_same_questions_and_the_set_is_kept(tmp_path, corpus, made):
    again = synthesize(corpus, SETTINGS)
    assert [q.model_dump() for q in again.questions] == [q.model_dump() for q in made.questions]
    first, paths = synthesized(tmp_path, corpus, SETTINGS)
    second, paths_again = synthesized(tmp_path, corpus, SETTINGS)
    assert paths == paths_again and [q.id for q in first.questions] == [q.id for q in second.questions]


def test_a_set_made_by_other_code_is_made_again(tmp_path, corpus, monkeypatch):
    from deepresearch.train.synth import synthesize as module

    kept = module.synth_dir(tmp_path, corpus, SETTINGS)
    assert module.synth_dir(tmp_path, corpus, SETTINGS) == kept
    monkeypatch.setattr(module, "code_fingerprint", lambda: "0ther0de")  # the synthesizer or the reader changed
    assert module.synth_dir(tmp_path, corpus, SETTINGS) != kept


def test_each_filter_drops_and_counts(corpus):
    keep = QuestionFilter(corpus.search, 3, 0.5)
    theatre = next(d.id for d in corpus if d.id.endswith("Dorset Garden Theatre.md"))
    rover = next(d.id for d in corpus if d.id.endswith("The Rover.md"))
    source = "It was designed by Christopher Wren."

    def one(question: str, answer: str = "Christopher Wren", kind: str = "name", doc: str = theatre) -> Candidate:
        return Candidate(kind="one_hop", question=question, answer=answer, answer_kind=kind, gold_doc_ids=[doc],
                         sources=[source], must_find=[(question, doc)])

    kept = keep.keep([
        one("Who designed the Dorset Garden Theatre?"),
        one("Was it designed by Christopher Wren?"),  # the answer is in it
        one("Who says it was designed by Christopher Wren?", answer="London"),  # copies the source
        one("When was the Dorset Garden Theatre designed?"),  # asks for a date, the answer is a name
        one("Who designed the Dorset Garden Theatre?"),  # again
        one("Who designed the Dorset Garden playhouse in London?", doc=rover),  # the search finds no Rover
    ])
    assert [c.question for c in kept] == ["Who designed the Dorset Garden Theatre?"]
    assert keep.stats.dropped["one_hop"] == {"answer_in_question": 1, "copies_source": 1, "wrong_kind": 1,
                                             "duplicate": 1, "common_opening": 0, "not_retrievable": 1,
                                             "still_answerable": 0}
    assert "| one_hop | 6 | 1 | 1 | 1 | 1 | 0 | 1 | 0 | 1 | 0 |" in keep.stats.table()


def test_the_synthesized_set_keeps_no_opening_above_its_share(corpus, made):
    from collections import Counter

    assert all(q.frame for q in made.questions)
    uncapped = synthesize(corpus, SETTINGS.model_copy(update={"opening_share": 1.0}))
    before = Counter((q.type, opening(q.frame)) for q in uncapped.questions)
    after = Counter((q.type, opening(q.frame)) for q in made.questions)  # 0.04 of 24: one question an opening
    assert max(after.values()) == 1 < max(before.values()), before
    assert made.stats.dropped["one_hop"]["common_opening"] > 0
    assert not uncapped.stats.dropped.get("one_hop", {}).get("common_opening")


def test_an_opening_is_the_frame_before_its_subject():
    assert opening("When was {s} born?") == opening("When was {s} released?") == "When was"
    assert opening("Who was born first, {a} or {b}?") == "Who was born first,"
    assert opening("{s} is made of what?") == "{s} is made of what?"


def test_an_opening_keeps_at_most_its_cap_per_kind(corpus):
    keep = QuestionFilter(corpus.search, 3, 0.5, max_per_opening=1)
    theatre = next(d.id for d in corpus if d.id.endswith("Dorset Garden Theatre.md"))

    def one(question: str, frame: str, kind: str = "one_hop") -> Candidate:
        return Candidate(kind=kind, question=question, answer="Christopher Wren", answer_kind="name",
                         gold_doc_ids=[theatre], sources=["It was designed by Christopher Wren."],
                         must_find=[(question, theatre)], frame=frame)

    kept = keep.keep([one("Who designed the Dorset Garden Theatre?", "Who designed {s}?"),
                      one("Who designed the Duke's Theatre in Dorset Garden?", "Who designed {s} in London?"),
                      one("Who was the architect of the Dorset Garden Theatre?", "Who was the architect of {s}?")])
    assert [c.frame for c in kept] == ["Who designed {s}?", "Who was the architect of {s}?"]
    assert keep.stats.dropped["one_hop"]["common_opening"] == 1


def test_an_honest_not_found_is_right_on_an_unanswerable_question_and_a_guess_is_wrong(made):
    from deepresearch.evals.run.scored_run import RunFacts
    from deepresearch.train.rounds.rewards import score_run

    cfg = RewardSettings()
    question = next(q for q in made.train_questions() if q.kind == "unanswerable")
    assert score_run(RunFacts(run_id="a", status="finished", answer="not found"), question, cfg).tier == "correct"
    assert score_run(RunFacts(run_id="b", status="finished", answer="1689"), question, cfg).tier == "wrong"
    answerable = next(q for q in made.train_questions() if q.kind == "one_hop")
    assert score_run(RunFacts(run_id="c", status="finished", answer="Not found."), answerable, cfg).tier == "not_found"


def test_a_corpus_too_small_for_held_out_documents_still_gives_answerable_questions():
    docs = SynthCorpus([SynthDoc("a", "Aphra Behn", "Aphra Behn (10 December 1640 – 16 April 1689) was an English "
                                 "playwright. She was buried in Westminster Abbey."),
                        SynthDoc("b", "The Rover", "The Rover is a play written by Aphra Behn. It was first "
                                 "performed in 1677.")])
    try:
        made = synthesize(docs, SynthSettings(questions=8))
    finally:
        docs.close()
    assert not made.held_out and made.questions
    assert {q.type for q in made.questions} <= {"one_hop", "two_hop", "comparison"}
    assert normalise(made.questions[0].answer)


def test_a_value_read_as_a_code_and_a_name_is_asked_for_as_a_code(tmp_path):
    """"GB-RSS04395B616" is a code before a name: "What is the hull id of …", not "Who is the hull id of …" (16 of
    userdocs-c's 196 synthesized questions were "Who is …" before, 2 after; userdocs' 27 of 265, 8)."""
    (tmp_path / "boats.csv").write_text("boat,class,hull_id\nRazorbill,ILCA 7,GB-RSS04395B616\n"
                                        "Sandpiper,Topper,GB-TPR45127E314\n")
    docs = SynthCorpus.from_path(tmp_path)
    try:
        asked = questions_of(docs, "boats.csv")
    finally:
        docs.close()
    assert asked["What is the hull id of Razorbill in boats?"] == "GB-RSS04395B616"
    assert not [q for q in asked if q.startswith("Who is the hull id")]
