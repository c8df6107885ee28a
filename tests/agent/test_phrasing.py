"""A question asked the way people ask it: wrapped in a request ("Do you know what …", "Can you tell me who …"), as
an imperative ("Tell me the gate code"), or as "if …" for yes or no, the reader reads the question inside."""

from __future__ import annotations

import pytest
from deepresearch.agent.reader import (
    RelevanceReader,
    answer_choices,
    answer_confidence,
    answer_kind,
    answer_options,
    by_relevance,
    evidence_units,
    question_kind,
)
from deepresearch.agent.reader.language.phrasing import cased_like, direct_question

CLUB = """# Brackenfold Agility Club: training nights

| Night | Time | Class | Instructor |
|---|---|---|---|
| Monday | 6.30–7.30pm | Puppy Foundations | Bethany Crowther |
| Wednesday | 7–8pm | Grade 3 and up | Anwen Lloyd |

The kit container's padlock code is 7305. Schedules and entries go to our show secretary, Sheila Brabbins.
"""


@pytest.mark.parametrize(("asked", "direct"), [
    ("Do you know what the fax number is?", "What is the fax number?"),
    ("Hey, does anyone know who the show secretary is?", "Who is the show secretary?"),
    ("Can you tell me who runs the Monday puppy class?", "Who runs the Monday puppy class?"),
    ("Could you find out when the show is?", "When is the show?"),
    ("Please tell me, which pin is the valve wired to?", "Which pin is the valve wired to?"),
    ("I'd like to know how many members we have.", "How many members we have?"),
    ("Tell me the gate code.", "What is the gate code?"),
    ("I need the gate code", "What is the gate code?"),
    ("I'm looking for the practice's fax number", "What is the practice's fax number?"),
    ("Any idea if the hall is free on the 14th?", "Is the hall free on the 14th?"),
    ("Do you know whether we need a permit?", "Do we need a permit?"),
    ("Hi, quick question: what time does the puppy class start?", "What time does the puppy class start?"),
    ("I need the gate code. Can you tell me what it is?", "I need the gate code. What is it?"),
    # what follows the question only says why it is asked, or thanks
    ("What's the gate code? I'm down there first tomorrow.", "What's the gate code?"),
    ("Who judges ring one? Thanks!", "Who judges ring one?"),
    ("Tell me the gate code. Thanks", "What is the gate code?"),
    # a "!" inside a name ends no sentence
    ("Do you know who the founder of Ignite! Learning is?", "Who is the founder of Ignite! Learning?"),
])
def test_the_question_inside_a_request_is_asked_directly(asked: str, direct: str):
    assert direct_question(asked) == direct


@pytest.mark.parametrize("question", [
    "Who designed the Analytical Engine?",
    "Do both films share a director?",
    "Is the deposit bigger for the hedge trimmer or the rotavator?",
    "Tell me about the Analytical Engine",  # a report, for open_questions
    "Can you explain how a steam engine works?",
    "What do you know about Aphra Behn?",
    "I need the number plate of the light tanker for the tyre place. What is it?",
    "I want to check when our boats are shipping. Who's the sales rep we deal with there?",
])
def test_a_direct_question_or_a_request_for_a_report_is_left_as_it_is(question: str):
    assert direct_question(question) == question


def test_a_wrapped_question_is_no_yes_no_question_and_keeps_its_kind():
    # "Do you know …" opens with an auxiliary: read as it stands, a yes/no question
    assert answer_choices("Do you know who runs the Monday puppy class?") is None
    assert answer_choices("Do you know if the hall is free on the 14th?") == ["yes", "no"]
    assert answer_kind("Can you tell me what the padlock code is?") == answer_kind("What is the padlock code?")
    assert answer_kind("Do you know when the show is?") == "date"
    assert question_kind("Could you tell me about the club's training nights?") == "open"


@pytest.mark.parametrize("asked", [
    "Do you know who runs the Monday puppy class?",
    "Can you tell me who runs the Monday puppy class?",
    "I'd like to know who runs the Monday puppy class.",
])
def test_a_wrapped_question_gets_the_answer_the_direct_one_gets(asked: str):
    def answer(question: str) -> tuple[str, float]:
        units = evidence_units(CLUB, 0, "brackenfold-training.html", "agility-club/brackenfold-training.html")
        found = answer_options(question, units, pool=5)
        assert found.choices is None
        reader = RelevanceReader(question, units)
        pool = by_relevance(found.candidates, reader)
        top = pool[0]
        return top.text, answer_confidence(top, pool, reader.of_answer(top.text, top.url, top.quote).score)

    direct = answer("Who runs the Monday puppy class?")
    assert direct[0] == "Bethany Crowther"
    assert answer(asked) == direct


def test_a_question_typed_in_lower_case_has_its_names_written_as_the_evidence_writes_them():
    texts = ["The Analytical Engine was designed by Charles Babbage.", "Babbage's Analytical Engine was never built.",
             "Monday | Puppy Foundations | Bethany Crowther", "On Monday the puppy class meets in the top field."]
    assert cased_like("who designed the analytical engine", texts) == "who designed the Analytical Engine"
    assert cased_like("who runs the monday puppy class", texts) == "who runs the Monday puppy class"
    # a writer who used capitals is taken at their word
    assert cased_like("Who runs the monday puppy class?", texts) == "Who runs the monday puppy class?"


def test_a_lower_case_question_gets_the_answer_its_capitalised_form_gets():
    units = evidence_units(CLUB, 0, "brackenfold-training.html", "agility-club/brackenfold-training.html")

    def top(question: str) -> str:
        reader = RelevanceReader(question, units)
        return by_relevance(answer_options(question, units, pool=5).candidates, reader)[0].text

    assert top("who runs the monday puppy class") == top("Who runs the Monday puppy class?") == "Bethany Crowther"


def test_a_lower_case_either_or_question_finds_its_two_names_in_the_evidence():
    text = ("Ulrich Walter (born 9 February 1954) is a German physicist, engineer and former astronaut.\n\n"
            "Luca Parmitano (born 27 September 1976) is an Italian engineer and astronaut of the ESA.")
    units = evidence_units(text, 0, "Astronauts", "wiki/astronauts")
    found = answer_options("who is younger ulrich walter or luca parmitano", units, pool=5)
    assert found.choices == ["Ulrich Walter", "Luca Parmitano"]
    assert found.decided is not None and found.decided.option == "Luca Parmitano"
