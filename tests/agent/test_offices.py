"""A "who" question answered by an office ("the Membership Secretary") gets the person the evidence says holds it."""

from __future__ import annotations

from deepresearch.agent.reader import ABOUT, EvidenceSentence, RelevanceReader, read_units
from deepresearch.agent.reader.answers.candidates import rank_candidates
from deepresearch.agent.reader.answers.offices import holder_of, holders, is_office, is_person
from deepresearch.agent.reader.answers.options import bridge_options


def units(text: str, title: str, url: str, source: int = 0) -> list[EvidenceSentence]:
    return [EvidenceSentence(u.text, source, title, url=url, position=i, kind=u.kind, header=u.header,
                             heading=u.heading, key=u.key) for i, u in enumerate(read_units(text))]


GUIDE = units("New members sign up through the Membership Secretary, who keeps the waiting list.\n\n"
              "Pay the hire fee to the Treasurer by bank transfer before the booking.",
              "Pottery studio: joining and hiring", "local://studio/joining.html")
MINUTES = units("**Present:** Ada Quill (Chair), Tom Reyes (Treasurer), Bea Moss\n\n"
                "| Role | Name |\n|---|---|\n| Membership Secretary | Oskar Lind |\n| Kiln Steward | Bea Moss |",
                "Studio AGM 2024", "local://studio/agm.md", source=1)


def test_offices_and_people():
    assert is_office("Membership Secretary") and is_office("competition coordinator") and is_office("Treasurer")
    assert not is_office("Oskar Lind") and not is_office("Kiln 2")
    assert is_person("Oskar Lind") and is_person("Tom") and not is_person("Membership Secretary")
    assert not is_person("Hexley Farm Ltd") and not is_person("T02")
    offices = holders(GUIDE + MINUTES)
    assert holder_of("Membership Secretary", offices)[0] == "Oskar Lind"  # a table row: office cell, name cell
    assert holder_of("the Treasurer", offices)[0] == "Tom Reyes"  # "Tom Reyes (Treasurer)"
    assert holder_of("Chair", offices)[0] == "Ada Quill" and holder_of("Caretaker", offices) is None


def test_the_holder_takes_the_offices_place_and_its_citation_is_about_the_question():
    question = "Who do I see to sign up as a new member?"
    evidence = GUIDE + MINUTES
    best = rank_candidates(question, evidence, k=3)[0]
    assert best.text == "Oskar Lind" and best.quote == "| Membership Secretary | Oskar Lind |"
    assert "Membership Secretary" not in [c.text for c in rank_candidates(question, evidence, k=9)]
    relevance = RelevanceReader(question, evidence).of_answer(best.text, best.url, best.quote)
    assert relevance.score >= ABOUT and relevance.link is not None and relevance.bridge == "Membership Secretary"
    assert rank_candidates("To whom is the hire fee paid?", evidence, k=3)[0].text == "Tom Reyes"


def test_an_office_nobody_is_named_for_stays_a_candidate():
    question = "Who do I see to sign up as a new member?"
    assert rank_candidates(question, GUIDE, k=3)[0].text == "Membership Secretary"


def test_an_office_nobody_is_named_for_is_the_next_hop_and_its_holder_the_answer():
    question = "Who do I see to sign up as a new member?"
    joining = units("New members sign up through the Membership Secretary.\n\nNew members' evenings with Clayworks "
                    "Trust potters run every March in Hollin Barn.", "Pottery studio: joining", "local://studio/join.html")
    assert bridge_options(question, joining, searched=())[0].text == "Membership Secretary"  # not "Clayworks Trust"
    # the hop read the minutes: the holder answers, though the office was the bridge the run searched
    hop = [EvidenceSentence(u.text, u.source, u.title, True, u.url, u.position, u.kind, u.header, u.heading, u.key)
           for u in MINUTES]
    best = rank_candidates(question, GUIDE + hop, k=3, bridges=["Membership Secretary"])[0]
    assert best.text == "Oskar Lind" and best.features["bridge"] == 0.0


def test_an_ordinary_word_opening_a_unit_is_no_part_of_the_name():
    notes = units("- Email Ines Ward about kiln bookings; she answers within a day.\n- Glazes are in the email "
                  "cupboard.", "Kiln notes", "local://studio/kiln.md")
    assert rank_candidates("Whom should I email about kiln bookings?", notes, k=3)[0].text == "Ines Ward"
    lake = units("Boats are launched on Lake Brenna.\n\nThe lake is cold, and the Lake Brenna club lends wetsuits.",
                 "Club", "local://club/lake.md")
    assert "Lake Brenna" in [c.text for c in rank_candidates("Where are boats launched?", lake, k=5)]


def test_a_holder_is_named_without_the_ordinary_word_opening_its_unit():
    loans = units("- Email Ines Ward (Kiln Steward), who keeps the firing list.\n- Firing fees are paid by email "
                  "to the studio.", "Kiln loans", "local://studio/loans.md")
    assert holder_of("Kiln Steward", holders(loans))[0] == "Ines Ward"  # not "Email Ines Ward"
    ranked = [c.text for c in rank_candidates("Whom should I email to book a firing?", loans, k=5)]
    assert "Ines Ward" in ranked and "Email Ines Ward" not in ranked

