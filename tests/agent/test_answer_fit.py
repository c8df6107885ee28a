"""A span fits what the question asks: its type named by its own words, its unit the measure asked, money asked by
"how much", a year asked met by a full date of that year, and a log line's day stamp no part of a name."""

from __future__ import annotations

from deepresearch.agent.reader import EvidenceSentence, read_units
from deepresearch.agent.reader.answers.anchors import anchored, anchors
from deepresearch.agent.reader.answers.candidates import rank_candidates
from deepresearch.agent.reader.language.kinds import answer_kind, asks_money, fits
from deepresearch.agent.reader.language.spans import Span, name_spans


def units(text: str, title: str = "notes", url: str = "local://notes.md") -> list[EvidenceSentence]:
    return [EvidenceSentence(u.text, 0, title, url=url, position=i, kind=u.kind, header=u.header,
                             heading=u.heading, key=u.key) for i, u in enumerate(read_units(text))]


def test_a_day_stamp_is_no_part_of_the_name_after_it():
    assert [s.text for s in name_spans("Mon 14 Oct Calder Heating started.")] == ["Calder Heating"]
    assert [s.text for s in name_spans("Sat 14 Sept Jonas Lindqvist rang back.")] == ["Jonas Lindqvist"]
    assert "Tue 15 Oct New" not in [s.text for s in name_spans("Tue 15 Oct New boiler fired up at 3pm.")]
    assert [s.text for s in name_spans("Priya Nair said on 14 Oct that Calder Heating would come.")] == \
        ["Priya Nair", "Calder Heating"]
    # names that hold a month word or a number stay whole
    assert "Battle of the Rosebud" in [s.text for s in name_spans("The Battle of the Rosebud was fought in 1876.")]
    assert "Brewzilla 35" in [s.text for s in name_spans("We mash in the Brewzilla 35 now.")]


def test_a_span_whose_own_last_word_names_the_asked_type():
    evidence = units("- Geoffrey pointed out that a boiler replacement would take most of the surplus.\n"
                     "- Mon 14 Oct Calder Heating started on the new boiler.")
    top = rank_candidates("Which heating firm ended up getting the job of replacing the hall boiler?", evidence)
    assert top[0].text == "Calder Heating"
    assert top[0].features["typed"] == 1.0 and top[0].features["novel"] == 1.0


def test_a_number_whose_unit_measures_what_is_asked():
    evidence = units("Kegged the pale ale: keg at 12 psi in the fridge, then left 10 days to carbonate.")
    top = rank_candidates("At what pressure was the pale ale keg left to carbonate?", evidence)
    assert top[0].text == "12 psi" and top[0].features["unit_fit"] == 1.0
    evidence = units("The March manure delivery: 6 tonnes, £45 delivered.")
    assert rank_candidates("How big was the manure delivery back in March?", evidence)[0].text == "6 tonnes"


def test_how_much_with_a_money_word_asks_money():
    assert asks_money("How much did Harbour Marine charge for servicing Guardian this spring?")
    assert asks_money("How much money did the club have in the bank at the end of 2023?")
    assert asks_money("How much is the fee for a junior?")
    assert not asks_money("How much pale ale wort ended up in the fermenter?")
    assert not asks_money("How much did the delivery weigh?")


def test_a_year_asked_is_written_by_a_full_date_of_that_year():
    asked = anchors("How much money did the club have in the bank at the end of 2023?")
    for unit in ("Eoghan: balance at 31 December 2023 was €23,418.60.", "Balance on 2023-12-31: €23,418.60",
                 "Balance on December 31, 2023: €23,418.60", "Balance 31/12/2023: €23,418.60"):
        assert anchored(asked, unit) == 1.0, unit
    assert anchored(asked, "Balance on 14 May 2024: €24,100.00") == 0.0
    # a day the question names is still matched as a day, not by its year alone
    assert anchored(anchors("What happened on 14 May 2024?"), "On 2 May 2024 the roof stuck.") == 0.0


def test_a_number_named_by_what_it_identifies_is_an_identifier():
    for q in ("What is the club's Irish Sailing affiliation number?",
              "Which Portsmouth number is Eimear Walsh's boat scored on in the Summer Series?",
              "What uniform number was the umpire wearing when the home run was hit?"):
        assert answer_kind(q) == "code", q
    for q in ("What is Mach number named after?", "What is the atomic number of carbon?",
              "What is the number of people in the hall?"):
        assert answer_kind(q) != "code", q
    assert fits(Span("1147", "number", 0), "code") and not fits(Span("4", "number", 0), "code")
    assert not fits(Span("1975", "number", 0), "code") and not fits(Span("Padraig Coyle", "name", 0), "code")
