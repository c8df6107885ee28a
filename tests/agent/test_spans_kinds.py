"""Spans of the kinds a person's documents answer with: identifiers and codes, quantities with units, dates in
several formats, and where something is when no name says it."""

from __future__ import annotations

import pytest
from deepresearch.agent.reader import EvidenceSentence, answer_options
from deepresearch.agent.reader.answers.structure import labelled_spans
from deepresearch.agent.reader.language.kinds import answer_kind, fits, kind_bonus
from deepresearch.agent.reader.language.spans import Span, code_spans, place_spans, quantity_spans, spans_of


@pytest.mark.parametrize(("sentence", "code"), [
    ("Gazelle Chamonix, frame no. GZ7731184K, checked.", "GZ7731184K"),
    ("| MLX90614 | 0x5A | sky temperature |", "0x5A"),
    ("Controller Wi-Fi MAC: 24:6F:28:A1:3C:7E, static IP", "24:6F:28:A1:3C:7E"),
    ("static IP 192.168.50.21", "192.168.50.21"),
    ("Omron D4MC-5020 on the left", "D4MC-5020"),
    ("Always fit a new CL555R quick link.", "CL555R"),
    ("Out of hours ring Jo on 07700 900 123.", "07700 900 123"),
    ("Harbour office: +353 87 765 4321 (VHF 16 first)", "+353 87 765 4321"),
    ("Please quote booking reference TSC/24/0613 when you ring.", "TSC/24/0613"),
    ("Our booking is HOL/B/24-118, confirmed.", "HOL/B/24-118"),
    ("After hours: (541) 555-0147, or the cell 503-555-0188.", "(541) 555-0147"),
    ("After hours: (541) 555-0147, or the cell 503-555-0188.", "503-555-0188"),
])
def test_codes(sentence: str, code: str):
    assert code in [s.text for s in code_spans(sentence)]


def test_plain_numbers_and_words_are_not_codes():
    assert code_spans("In 1989, the 250 people of Wi-Fi town won 3rd place twice.") == []
    assert code_spans("Seasons 2019 2020 2021 were cancelled; 12 000 came in 2022.") == []
    # slashes join a code's parts only where letters and digits both stand among them
    assert code_spans("Open 24/7 at 30 km/h and/or on 13/02/2024.") == []


@pytest.mark.parametrize(("question", "kind"), [
    ("What time does the first race start on Thursdays?", "time"),
    ("At what time does the bar close?", "time"),
    ("What time period does the archive cover?", "name"),
    ("What are we paying for the boiler service contract?", "number"),
    ("What would a school be charged for the small room?", "number"),
    ("What did the club pay for the new sails?", "number"),
    ("What company paid for the new sails?", "name"),
    ("What's the most players we can field in the league?", "number"),
    ("What is the most famous painting in the museum?", "name"),
    ("Which number should I ring when the alarm goes off?", "code"),
    ("Which number is on the winning ticket?", "name"),
    ("What number should I ring when the alarm goes off?", "code"),
    ("What's the sail number of the club's Laser?", "code"),
    ("The plumber wants the water meter's account number. What is it?", "code"),
    ("What is the customer reference on the gas bill?", "code"),
    ("What's Tarnside's price for the coach?", "number"),
    ("What's the price of the coach?", "number"),
    # a clause that sets the question up says nothing of what is asked ("when" here asks no date)
    ("When the alarm goes off at night, which neighbour holds the spare key?", "name"),
    ("If the boiler fails on a Sunday, what number should I ring?", "code"),
    ("Under the new tariff, what does a member pay for a lane?", "number"),
    ("When did the club open its second hall?", "date"),
    # "how" with any word of degree before its verb asks for a quantity; "how" with a verb does not
    ("How warm did the greenhouse get overnight?", "number"),
    ("How steep is the new wheelchair ramp?", "number"),
    ("How did the committee vote on the extension?", "name"),
    ("What's the largest number of dogs one walker can take out?", "number"),
    ("What's the most people we can seat for a dinner?", "number"),
    ("Which days is the pool closed for cleaning?", "date"),
    ("What's Amira's last day in the office?", "date"),
])
def test_answer_kinds(question: str, kind: str):
    assert answer_kind(question) == kind


def test_an_identifier_whose_format_is_named_has_that_format():
    unit = EvidenceSentence("The hub (Net2, tag NB-19) has MAC 00:0C:8A:3F:71:D2 and the IP 192.168.1.40.", 0)
    for question, answer in (("What is the MAC address of the door hub?", "00:0C:8A:3F:71:D2"),
                             ("What IP address does the door hub have?", "192.168.1.40")):
        assert [c.text for c in answer_options(question, [unit], pool=5).candidates] == [answer]
    assert answer_options("What is the MAC address of the door hub?",
                          [EvidenceSentence("The hub is a Net2 (tag NB-19).", 0)], pool=5).candidates == []
    ring = EvidenceSentence("Out of hours, ring the duty vet, code DV-2, on (541) 555-0147.", 0)
    assert answer_options("What phone number do I ring out of hours?", [ring], pool=5).candidates[0].text == \
        "(541) 555-0147"


def test_times_and_digit_identifiers():
    assert [s.text for s in spans_of("Warning signal 18:45, bar shuts 11 p.m., cold by 9 o'clock.")
            if s.kind == "time"] == ["18:45", "11 p.m.", "9 o'clock"]
    assert [s.text for s in spans_of("Bakers in by 3.30am, doors at 7.15 pm; 3.30 litres.") if s.kind == "time"] == \
        ["3.30am", "7.15 pm"]
    read = [s.text for s, _ in labelled_spans(EvidenceSentence("Hall at 11°C by 9 o'clock.", 0))]
    assert "11°C" in read and "9 o" not in read and "9" not in read
    assert fits(Span("7398210604", "number", 0), "code") and fits(Span("45127", "number", 0), "code")
    assert not fits(Span("2024", "number", 0), "code") and not fits(Span("120", "number", 0), "code")
    labelled = [s.text for s, _ in labelled_spans(EvidenceSentence("Water: SPID 3301948852, meter in the cellar.", 0))]
    assert "3301948852" in labelled  # the number a label names is no model's number
    # a currency written as its code before the amount is a money amount with its unit
    assert fits(Span("EUR 465", "number", 0), "number", measure=True)
    assert kind_bonus(Span("EUR 465", "number", 0), "number", unit=True) == 0.5


@pytest.mark.parametrize("quantity", ["6.5 bar", "40 Nm", "0.5 %", "17 °C", "24.5 kg", "1500 mm", "28 days",
                                      "1.8 m × 1.2 m", "6x3 m", "EUR 465", "GBP 1,200.50"])
def test_quantities(quantity: str):
    assert quantity in [s.text for s in quantity_spans(f"It is set to {quantity} here.")]


@pytest.mark.parametrize(("sentence", "date"), [
    ("Truing stand arrived 2024-04-02 at noon.", "2024-04-02"),
    ("Paid on 30/08/2024.", "30/08/2024"),
    ("Next meeting: Tuesday 8th October 2024, same place.", "8th October 2024"),
    ("New dates: 1–3 November 2024 (Friday to Sunday).", "1–3 November 2024"),
    ("01/06/24 OT Tool shed door forced sometime overnight.", "01/06/24"),  # a diary's own short form
    ("Released 30.08.2024 as v1.2.3.", "30.08.2024"),
    ("The Year 6 leavers' disco is on Friday 19 July in the hall.", "Friday 19 July"),  # a letter home's date
    ("Tue 13/02: deck 3 not heating up properly.", "Tue 13/02"),
    ("It rained on 30 Aug.", "30 Aug"),
    ("We'll now be fitting from Monday 19th to Friday 23rd August instead.", "Monday 19th to Friday 23rd August"),
])
def test_dates(sentence: str, date: str):
    assert date in [s.text for s in spans_of(sentence) if s.kind == "date"]


def test_a_day_without_its_year_answers_only_where_no_fuller_date_does():
    assert [s.text for s in spans_of("Born 16 April 1689 in Kent.") if s.kind == "date"] == \
        ["16 April 1689", "April 1689", "1689"]  # not "16 April" inside it
    q = "When is the Year 6 leavers' disco?"
    bare = EvidenceSentence("The Year 6 leavers' disco is on Friday 19 July.", 0)
    full = EvidenceSentence("The Year 6 leavers' disco is on 19 July 2024 in the hall.", 1)
    assert answer_options(q, [bare], pool=5).candidates[0].text == "Friday 19 July"
    both = answer_options(q, [bare, full], pool=5).candidates
    assert both[0].text == "19 July 2024"
    # by its kind a bare day ranks below other dates as far as a full date ranks above them
    bonus = {t: kind_bonus(Span(t, "date", 0), "date") for t in ("19 July 2024", "01/06/24", "Friday 19 July")}
    assert bonus["19 July 2024"] > bonus["01/06/24"] == 0 > bonus["Friday 19 July"] == -bonus["19 July 2024"]


def test_a_fraction_or_version_is_no_short_date():
    assert [s.text for s in spans_of("Mix 1/2/3 parts; firmware v1.2.3 of 2/3 of units.") if s.kind == "date"] == []


def test_places():
    assert [s.text for s in place_spans("The first-aid kit is above the sink.")] == ["above the sink"]
    assert place_spans("He moved to New York in 1990.") == []
    # A name that follows is the place (pool dev: "on the Bahamian island of" answered for "Great Exuma").
    assert place_spans("The festival was held on the Bahamian island of Great Exuma.") == []
    assert [s.text for s in place_spans("A first-aid kit in the tea tent for all.")] == ["in the tea tent"]
