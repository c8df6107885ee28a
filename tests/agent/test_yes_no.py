"""A yes/no question about one thing is read from the unit that states it (reader/answers/yes_no.py)."""

from __future__ import annotations

from deepresearch.agent.reader import EvidenceSentence, answer_options


def units(*texts: str) -> list[EvidenceSentence]:
    return [EvidenceSentence(t, i, "Star party guide", url=f"local://doc/{i}") for i, t in enumerate(texts)]


def test_a_negated_statement_answers_no_and_a_plain_one_yes():
    evidence = units("There is no mains power on the star-party field.", "Bring warm clothes and a red torch.")
    decided = answer_options("Is there mains power on the star-party field?", evidence, pool=5).decided
    assert decided is not None and (decided.option, decided.rule) == ("no", "polarity")
    assert decided.quote == "There is no mains power on the star-party field."
    evidence = units("The entry fee stays at $8 per beer entry.", "The competition moved to May 4.")
    decided = answer_options("Now that the competition has moved, is the entry fee still $8 per beer?", evidence,
                             pool=5).decided
    assert decided is not None and decided.option == "yes"
    outlet = units("The Foundry 10.5 will not run on an ordinary 120 V kitchen outlet.")
    decided = answer_options("If I borrow the Foundry 10.5, will it run on a 120 V kitchen outlet?", outlet,
                             pool=5).decided
    assert decided is not None and decided.option == "no"


def test_undecided_when_nothing_covers_the_question_or_it_compares_two_things():
    evidence = units("There is no mains power on the star-party field.")
    assert answer_options("Is the bar open on Sunday night?", evidence, pool=5).decided is None
    # two things compared: shared_property.py's question, not a unit's polarity
    assert answer_options("Are the field and the hall both without mains power?", evidence, pool=5).decided is None
    # the question's own negation: a unit's "no" would not say which way
    assert answer_options("Is there no mains power on the star-party field?", evidence, pool=5).decided is None
