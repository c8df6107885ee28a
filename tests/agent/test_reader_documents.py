"""The reader on a person's documents: a table cell under the column the question asks for, a "Key: value" line's
value, a later or correcting note over a stale one, a quantity with its unit, numbers inside dates left alone."""

from __future__ import annotations

from deepresearch.agent.reader import EvidenceSentence, read_units
from deepresearch.agent.reader.answers.candidates import rank_candidates
from deepresearch.agent.reader.answers.structure import asked_words
from deepresearch.agent.reader.document.recency import first_date, written_on


def units(text: str, title: str = "notes", url: str = "local://mine/notes.md", source: int = 0):
    return [EvidenceSentence(u.text, source, title, url=url, position=i, kind=u.kind, header=u.header,
                             heading=u.heading, key=u.key) for i, u in enumerate(read_units(text))]


PARTS = units("Chains\n| Part no. | Speeds | Links | Member price |\n| KMC X11-93 | 11 | 116 | €24.50 |\n"
              "| KMC X11-EL | 11 | 118 | €38.00 |\n| KMC X9-93 | 9 | 116 | €17.00 |\n"
              "Replace 11-speed chains at 0.5 % elongation.", title="Parts we stock")


def top(question: str, evidence) -> str:
    return rank_candidates(question, evidence, k=3)[0].text


def test_the_cell_of_the_asked_column_in_the_row_of_the_asked_thing():
    assert top("How many links does the KMC X11-EL chain have?", PARTS) == "118"  # not the 116 of two other rows
    assert top("What is the member price of the KMC X9-93?", PARTS) == "€17.00"


def test_asked_words_skip_auxiliaries_and_kind_words():
    assert asked_words("How many links does the chain have?") == {"link"}
    assert asked_words("What is the focal length of the telescope?") == {"focal", "lengt"}
    assert asked_words("Who leads the Tuesday session?") == {"lead"}
    assert asked_words("On what date did the stand arrive?") == set()  # "date" says the kind, not the column


def test_a_fields_value_answers_a_question_about_its_key():
    notes = units("Who's who\nWeekday workshop lead: Ines Barros (Tuesday evenings).\n"
                  "Weekend workshop lead: Tomasz Wierzbicki (Saturday mornings).\nTreasurer: Dele Adeyemi.")
    assert top("Who is the weekend workshop lead?", notes) == "Tomasz Wierzbicki"


def test_a_quantity_is_answered_with_its_unit():
    notes = units("Torque values\n| Fastener | Torque | Wrench |\n| Stem bolts | 5 Nm | TW-5.2 |\n"
                  "| Cassette lockring | 40 Nm | TW-6.2 |\n| Rotor bolts | 4 Nm | TW-5.2 |")
    assert top("What torque does the handbook give for a cassette lockring?", notes) == "40 Nm"


def test_a_later_correcting_note_wins_over_the_stale_one():
    handbook = units("Compressor: the tyre inflator regulator is set to 6.5 bar. Do not change it.",
                     title="Volunteer Handbook", url="local://mine/handbook.pdf")
    log = units("2024-03-09 11:30 TW  Compressor: set regulator to 6.5 bar for the tyre inflator.\n"
                "2024-04-20 13:50 TW  CORRECTION to 2024-03-09: inflator regulator max is 8 bar, not 6.5 bar.",
                title="workshop-log", url="local://mine/workshop-log.txt", source=1)
    assert top("To what maximum pressure should the tyre inflator regulator be set?", handbook + log) == "8 bar"


def test_numbers_inside_dates_are_no_answers():
    log = units("date | time | observer | notes\n12/08/2024 | 23:05 | FG | Perseids: 47 meteors in 60 min.\n"
                "14/09/2024 | 22:15 | NH | Moon, gave up at 23:00.")
    assert top("How many Perseid meteors were counted on 12 August 2024?", log) == "47"


def test_numbers_inside_codes_are_no_answers():
    notes = units("- Pump: firmware v2.3.0 stops the pump when the tank reads above 40 % full.")
    numbers = [c.text for c in rank_candidates("At what threshold does the pump stop?", notes, k=9)]
    assert "40 %" in numbers and "3.0" not in numbers and "2.3" not in numbers


def test_the_day_of_a_day_and_month_is_no_count_or_measure():
    notes = units("- Kiln checked on 14 Oct by Ravi, 3 shelves cracked.\n- Glaze order arrives Nov 2nd.")
    numbers = [c.text for c in rank_candidates("How many kiln shelves cracked?", notes, k=9)]
    assert numbers[0] == "3" and "14" not in numbers and "2" not in numbers
    # with nothing else to offer, no number at all: "not found" rather than the day of a date
    only = units("- Mixer serviced on 30 Aug.")
    assert rank_candidates("At what speed does the mixer run?", only, k=9) == []


def test_a_time_asked_is_answered_by_a_time_and_an_amount_asked_by_its_verb_by_an_amount():
    notes = units("Race nights: the first warning signal is now at 18:45 (was 19:00), 3 races.\n"
                  "Berths: we pay €410 a year for the club's mooring; Aoife Ryan collects it.", title="Club notes")
    assert top("What time is the first warning signal now?", notes) == "18:45"
    assert top("What do we pay for the club's mooring?", notes) == "€410"


def test_a_correction_vouches_for_what_it_states_not_for_what_it_refers_to():
    minutes = units("CORRECTION to the notes of 4 June 2024, item 3: the junior fee is £12, not £10.\n"
                    "- The pavilion roof was replaced in May; the club room is shut on 9 June 2024.\n"
                    "- Summer social: Saturday 20 July 2024 at the pavilion.", title="Committee notes")
    ranked = {c.text: c for c in rank_candidates("When is the summer social?", minutes, k=9)}
    assert ranked["4 June 2024"].features["corrects"] == 0.0  # the correction's reference, not what it states
    assert ranked["9 June 2024"].features["corrects"] == 0.0  # a roof "replaced" corrects nothing
    assert top("When is the summer social?", minutes) == "20 July 2024"
    fees = {c.text: c for c in rank_candidates("How much is the junior fee?", minutes, k=9)}
    assert fees["£12"].features["corrects"] == 1.0 and fees["£10"].features["stale"] == 1.0


def test_a_value_called_wrong_is_stale():
    log = units("Invoice gives the hull number as IRL-4471B - WRONG. Plate on the transom says IRL-4417B.")
    ranked = {c.text: c for c in rank_candidates("What is the hull number on the transom?", log, k=9)}
    assert ranked["IRL-4471B"].features["stale"] == 1.0 and ranked["IRL-4417B"].features["stale"] == 0.0


def test_a_value_a_few_words_after_its_cue_is_stale():
    report = units("Her report allows up to 120 guests in the hall, instead of the old limit of 90.")
    ranked = {c.text: c for c in rank_candidates("How many guests can the hall hold now?", report, k=9)}
    assert ranked["90"].features["stale"] == 1.0 and ranked["120"].features["stale"] == 0.0


def test_an_amount_asked_by_its_name_is_money():
    notes = units("Costs of drugs and tests are up 9 to 14%. From May the nail clip is $18.00 a visit.")
    assert [c.text for c in rank_candidates("What's our fee for a nail clip?", notes, k=9)] == ["$18.00"]


def test_an_amount_asked_by_its_verb_is_money():
    notes = units("- New sails: 2 bags from Quay Sails, 14 kg in all, we paid £1,240 on delivery.")
    assert [c.text for c in rank_candidates("What did the club pay for the new sails?", notes, k=9)] == ["£1,240"]


def test_a_time_of_day_is_no_count():
    log = units("2024-05-02 19:40 KB Launch delayed to 20:15, 3 boats out.")
    numbers = [c.text for c in rank_candidates("How many boats went out?", log, k=9)]
    assert numbers[0] == "3" and not {"19", "40", "20", "15"} & set(numbers)


def test_the_value_before_not_is_the_corrected_one():
    log = units("2024-03-09 11:00 RB CORRECTION to 2024-03-02: the tank reading was 410 L, not 440 L. Misread it.")
    ranked = {c.text: c for c in rank_candidates("How much did the tank really hold?", log, k=9)}
    assert ranked["410 L"].features["stale"] == 0.0 and ranked["440 L"].features["stale"] == 1.0


def test_a_models_number_is_no_measure():
    notes = units("| Month | Batch | Host | Kit |\n| May | Rye saison | Dana Holt | Brewzilla 35 |\n"
                  "| June | Dry stout | Ken Ito | Anvil Foundry 6.5 |")
    assert rank_candidates("What mash temperature did Ken use for the stout?", notes, k=9) == []
    # a count is kept where it opens the text or follows no name ("Over 300 people")
    crowd = units("Over 300 people came to the open day.")
    assert top("How many people came to the open day?", crowd) == "300"


def test_when_a_unit_was_written():
    assert first_date("Tuesday 10th September 2024, 20:00") == (2024, 9, 10)
    assert first_date("paid 30/08/2024") == (2024, 8, 30) and first_date("June 1, 2024") == (2024, 6, 1)
    assert first_date("the 2010 FIFA World Cup") is None  # a bare year dates nothing
    [row] = [u for u in units("date | note | by\n12/08/2024 | seen | FG\n") if u.kind == "row"]
    assert written_on(row) == (2024, 8, 12)
    [plain] = units("The fee is €30.", title="Members' meeting", url="local://mine/2024-05-02_meeting.md")
    assert written_on(plain) == (2024, 5, 2)


def test_a_log_lines_stamp_dates_what_it_records():
    log = units("2024-03-28 17:20 RC  Bottom bracket tool missing. Found in the parts sink.\n"
                "2024-04-02 18:40 IB  Truing stand TS-2.3 base arrived; assembled at bench 3.\n"
                "2024-04-06 10:20 TW  Torque wrench sent out for calibration.")
    assert top("On what date did the truing stand arrive?", log) == "2024-04-02"


def test_a_date_keyed_field_does_not_answer_every_date_question():
    # "On what date …": every date answers the word "date", so a "New dates:" or "Date:" line about something else is
    # no better place for the answer than the unit that names what the question asks about.
    notes = units("Harvest fair\nNew dates: 12–13 October 2024 (the hall was double-booked).\n\n"
                  "Boiler\n- Service contract v4.2 (signed 2024-02-14): yearly visit in March.", title="club notes")
    assert top("On what date was the boiler service contract v4.2 signed?", notes) == "2024-02-14"
    meeting = units("**Date:** Monday 4 March 2024, 19:00\n\n## Library\nLoans\nPrices valid from April 2, 2024. "
                    "Page kept by Ann.", title="meeting notes")
    assert top("From what date are the library loan prices valid?", meeting) == "April 2, 2024"


def test_the_year_inside_a_date_is_no_date_of_its_own():
    # "2024" of "June 1, 2024" shares the full date's sentence and every other date's year, so it outranked the date.
    notes = units("Jabs\nThe dog had her jab on March 3, 2023.\n\nOther\nWe moved house in 2023.", title="pets")
    dates = [c.text for c in rank_candidates("On what date did the dog have her jab?", notes, k=5)]
    assert dates[0] == "March 3, 2023" and "2023" in dates  # the year said alone is still a date
    assert sum(c.text == "2023" and "jab" in c.quote for c in
               rank_candidates("On what date did the dog have her jab?", notes[:2], k=5)) == 0
    years = [c.text for c in rank_candidates("In what year did the dog have her jab?", notes[:2], k=5)]
    assert "2023" in years


def test_the_days_and_codes_a_question_names_pin_its_unit():
    from deepresearch.agent.reader.answers.anchors import anchors

    assert anchors("Who leads the Tuesday 14 May 2024 session?") == {"14/5"}  # the day's year is part of the day
    assert anchors("| Tue 14 May | evening |") == anchors("on 14/05/2024") == anchors("2024-05-14 18:00") - {"18", "00"}
    assert anchors("updated to firmware v2.3.1") == anchors("firmware 2.3.0 -> 2.3.1") - {"230"} == {"231"}
    assert anchors("the KMC X11-EL chain at the 1967 games") == {"x11el", "1967"}
    # The rota's row for that day, not the field that names the shift lead: the question writes the day as digits.
    rota = units("Shift lead: Dana Price (Saturday mornings).\n\nRota\n| Day | Lead | Helper |\n"
                 "| Mon 3 June | Ola Berg | Sam Lund |\n| Mon 10 June | Kit Moss (cover) | Sam Lund |", title="rota")
    assert top("Who is the shift lead on 10/06/2024?", rota) == "Kit Moss"


def test_a_setext_heading_and_a_field_wrapped_after_a_comma():
    from deepresearch.agent.reader import read_units

    units = read_units("Harbour Rowing Club\n===================\n\nMinutes, Tuesday 4 June 2024\n\n"
                       "Present: Ann Lee (Chair), Bo Park (Treasurer),\nCal Moss (Captain).\n"
                       "Apologies: Dee Fox.\n\nBoats\n-----\nThe new trailer costs £2,400.\n")
    texts = [u.text for u in units]
    assert not any("===" in t or "---" in t for t in texts)
    present = next(u for u in units if u.text.startswith("Present"))
    assert present.kind == "field" and present.text.endswith("Cal Moss (Captain).")
    assert "Harbour Rowing Club" not in texts  # the title is a heading, no unit of its own
    assert next(u for u in units if u.text.startswith("Apologies")).kind == "field"
    assert next(u for u in units if "trailer" in u.text).heading == "Boats"


def test_a_count_is_no_amount_of_money_or_share():
    fees = units("Neutering fees\n| Procedure | Fee |\n| Rescue cat spay or neuter | $95.00 |\n"
                 "Members get 10% off day entry.")
    assert rank_candidates("How many rescue cats did we spay last year?", fees, k=9) == []
    assert rank_candidates("How many members get a discount?", fees, k=9) == []
    assert rank_candidates("How many dollars is a rescue cat spay?", fees, k=9)[0].text == "$95.00"
    counted = units("We spayed 37 rescue cats in 2024, at $95.00 each.")
    assert [c.text for c in rank_candidates("How many rescue cats did we spay in 2024?", counted, k=9)][0] == "37"
