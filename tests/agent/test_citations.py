"""The citation check: the quote is in its source, and the quote supports the point citing it."""

from __future__ import annotations

from deepresearch.agent.graph.citations import check_citation, unsupported_terms
from deepresearch.agent.graph.state import Finding
from deepresearch.agent.reader import ABOUT, EvidenceSentence, RelevanceReader

BEHN = "The City Heiress is a play by Aphra Behn produced in 1682."
SOURCE = f"The City Heiress, or Sir Timothy Treat-all is a Restoration comedy. {BEHN} It was a success."


def finding(quote: str = BEHN) -> Finding:
    return Finding(step_id=1, claim="", quote=quote, source="local://demo/behn", title="The City Heiress",
                   doc_id="behn", start=0, end=0)


def test_a_point_naming_someone_its_quote_does_not_is_unsupported():
    # The README main job's failure: a point about John Burgoyne citing a quote that names Aphra Behn.
    cite = check_citation(2, finding(), "The City Heiress is a comedy play by John Burgoyne.", lambda _: SOURCE)
    assert not cite["verified"]
    assert "Burgoyne" in cite["reason"] and "does not support" in cite["reason"]


def test_a_point_whose_names_and_numbers_are_in_its_quote_is_verified():
    cite = check_citation(1, finding(), "Aphra Behn wrote The City Heiress, staged in 1682.", lambda _: SOURCE)
    assert cite["verified"] and cite["reason"] == ""


def test_numbers_and_dates_count_and_the_title_supports_too():
    assert unsupported_terms("It was produced in 1683.", BEHN) == ["1683"]
    assert unsupported_terms("He was born there.", "He was born in London.") == []
    assert unsupported_terms("Aphra Behn's play", "She wrote it.", title="Aphra Behn") == []


def test_a_quote_missing_from_the_source_fails_first():
    cite = check_citation(1, finding(), "Aphra Behn wrote it.", lambda _: "A different page.")
    assert not cite["verified"] and cite["reason"] == "quote not found in the source"


def test_a_bare_yes_or_no_point_is_not_verified():
    # Seen in the session-6 eval: points "yes" and "no" of one report, both verified, citing unrelated sentences.
    for point in ("yes", "No.", "The answer is yes"):
        cite = check_citation(1, finding(), point, lambda _: SOURCE)
        assert not cite["verified"] and cite["reason"] == "the point says nothing a quote could support", point
    assert check_citation(1, finding(), "yes, a play by Aphra Behn", lambda _: SOURCE)["verified"]


DEATH = "Aphra Behn (14 December 1640 – 16 April 1689) was a British playwright."
PAGES = {"local://demo/behn": SOURCE, "local://demo/aphra": f"{DEATH} She wrote plays."}


def test_each_point_is_checked_on_its_own_even_when_two_cite_one_finding():
    """Before: the first point citing a finding decided its status, so a second point naming someone
    the quote never mentions was printed as verified."""
    from deepresearch.agent.graph.nodes.writer import cite_points, render_report
    from deepresearch.agent.graph.schemas import ReportPoint

    points = [ReportPoint(text="Aphra Behn wrote The City Heiress.", cite=1),
              ReportPoint(text="The City Heiress is by John Burgoyne.", cite=1)]
    answer = check_citation(1, finding(DEATH), "1689", lambda _: DEATH)
    cites = cite_points(points, [finding()], [answer], PAGES.get, RelevanceReader("Who wrote The City Heiress?", []))
    assert [(c["n"], c["verified"]) for c in cites] == [(2, True), (2, False)]
    report = render_report("Who wrote The City Heiress?", "Aphra Behn", None, points, cites, "")
    assert "- Aphra Behn wrote The City Heiress. [2]" in report
    assert "- The City Heiress is by John Burgoyne. _(unsupported: citation removed" in report
    assert report.count(f"> {BEHN}") == 1  # the source is listed once


def test_a_point_quoting_the_answers_sentence_shares_the_answers_number():
    from deepresearch.agent.graph.nodes.writer import cite_points
    from deepresearch.agent.graph.schemas import ReportPoint

    aphra = Finding(step_id=2, claim="", quote=DEATH, source="local://demo/aphra", title="Aphra Behn",
                    doc_id="aphra", start=0, end=0)
    points = [ReportPoint(text=DEATH, cite=2), ReportPoint(text=BEHN, cite=1)]
    answer = {**check_citation(1, aphra, "1689", PAGES.get), "n": 1}
    reader = RelevanceReader("When did the playwright of The City Heiress die?",
                             [EvidenceSentence(BEHN, 0, "The City Heiress", url="local://demo/behn")])
    cites = cite_points(points, [finding(), aphra], [answer], PAGES.get, reader)
    # Aphra Behn's sentence does not name The City Heiress: it is about the question through the play's sentence.
    assert [(c["n"], c["quote"], c["verified"]) for c in cites] == [(1, DEATH, True), (2, BEHN, True)]


def test_findings_are_numbered_in_order_of_first_use_without_an_answer_citation():
    from deepresearch.agent.graph.nodes.writer import cite_points
    from deepresearch.agent.graph.schemas import ReportPoint

    aphra = Finding(step_id=2, claim="", quote=DEATH, source="local://demo/aphra", title="Aphra Behn",
                    doc_id="aphra", start=0, end=0)
    points = [ReportPoint(text="Aphra Behn died in 1689.", cite=2), ReportPoint(text="It was staged in 1682.", cite=1),
              ReportPoint(text="She was a British playwright.", cite=2)]
    reader = RelevanceReader("When did the playwright of The City Heiress die?",
                             [EvidenceSentence(BEHN, 0, "The City Heiress", url="local://demo/behn")])
    cites = cite_points(points, [finding(), aphra], [], PAGES.get, reader)
    assert [(c["n"], c["verified"]) for c in cites] == [(1, True), (2, True), (1, True)]


def test_a_quote_that_is_not_about_the_question_is_not_verified_and_not_a_key_point():
    """The README's second example offline: a steam-engine sentence cited for "Who designed the Analytical Engine?"
    was verified because the span stood in it; a sentence not about the question now verifies nothing."""
    from deepresearch.agent.graph.nodes.writer import cite_points, render_report
    from deepresearch.agent.graph.schemas import ReportPoint

    steam = ("Elsewhere, notably in the U.S.A., more advanced designs with electric transmission were built "
             "experimentally.")
    found = Finding(step_id=1, claim="", quote=steam, source="local://demo/steam", title="Steam engine",
                    doc_id="steam", start=0, end=0)
    reader = RelevanceReader("Who designed the Analytical Engine?",
                             [EvidenceSentence(steam, 0, "Steam engine", url="local://demo/steam")])
    assert reader.of("local://demo/steam", steam).score < 0.25
    answer = check_citation(1, found, "U.S.A", lambda _: steam, about=False)
    assert not answer["verified"] and answer["reason"] == "the quote is not about the question"
    point = ReportPoint(text=steam, cite=1)
    cites = cite_points([point], [found], [], lambda _: steam, reader)
    assert not cites[0]["verified"]
    report = render_report("Who designed the Analytical Engine?", "not found", None, [point], cites, "")
    assert steam not in report  # not shown as a key point at all


def test_an_open_questions_framing_words_are_not_what_a_quote_must_cover():
    """"List the uses and hazards of …", "pros and cons of …": the request's own words ("list", "uses", "pros") were
    weighed as the question's rarest words, so an on-topic quote fell under the gate and one sharing "list" passed."""
    from deepresearch.agent.reader import ABOUT

    iodine = "Iodine-131 treats thyroid cancer in nuclear medicine."
    more = [EvidenceSentence(f"Iodine-131 fact {n}.", 0, "Iodine-131", url=f"m{n}") for n in range(5)]
    reader = RelevanceReader("List the uses and hazards of Iodine-131.",
                             [EvidenceSentence(iodine, 0, "Iodine-131", url="u1"), *more])
    assert reader.of("u1", iodine, "Iodine-131").score >= ABOUT  # 0.18 when "list" and "uses" weighed most
    bulk = "Warehouse stores offer a selection of merchandise sold in bulk at discount prices."
    mall = "The mall is owned by Melvin Simon and Associates, a developer of shopping malls and stores."
    reader = RelevanceReader("What are the pros and cons of shopping at a warehouse store?",
                             [EvidenceSentence(bulk, 0, "Warehouse store", url="u1"),
                              EvidenceSentence(mall, 0, "Walt Whitman Shops", url="u2")])
    # the mall's sentence shares "shopping" and "stores" as the bulk one shares "warehouse" and "stores": no more
    assert reader.of("u1", bulk, "Warehouse store").score >= reader.of("u2", mall, "Walt Whitman Shops").score
    assert reader.of("u1", bulk, "Warehouse store").score >= ABOUT
    # a factoid question's every word counts: "list" is what this one is about
    assert "list" in RelevanceReader("Which list did the song top?", []).words.weights


def test_a_chain_links_through_a_place_titles_head_and_a_name_without_its_honorific():
    """Pool train, held out: right answers fell under the gate because their unit's page is "Waterford, New York"
    while the link names "Waterford", or the link names "Sir Sacheverell Sitwell" and the other "Sacheverell
    Sitwell" (starter, 200 held-out train questions: right answers kept at the gate 27 → 31 of 32)."""
    tug = "Catawissa was a historic tugboat located at Waterford in Saratoga County, New York."
    town = "The population was 8,515 at the 2000 census."
    reader = RelevanceReader("What was the population of the town as of 2000 where the historic tugboat Catawissa "
                             "is located?", [EvidenceSentence(tug, 0, "Catawissa (tugboat)", url="local://tug"),
                                             EvidenceSentence(town, 1, "Waterford, New York", url="local://town")])
    found = reader.of("local://town", town)
    assert found.score >= 0.25 and found.bridge == "Waterford" and found.link.text == tug
    son = "The elder son of Sir Sacheverell Sitwell, 6th Baronet, he was educated at Eton College."
    family = "The Sitwells (Edith Sitwell, Osbert Sitwell, Sacheverell Sitwell) were a literary family."
    reader = RelevanceReader("Where was Osbert Sitwell's sibling educated?",
                             [EvidenceSentence(family, 0, "The Sitwells", url="local://family"),
                              EvidenceSentence(son, 1, "Reresby Sitwell", url="local://son")])
    assert reader.of("local://son", son).score >= 0.25
    # the honorific alone is no name to link on: "Sir Walter" and "Walter" do not join two pages
    lone = RelevanceReader("Where was Osbert Sitwell educated?",
                           [EvidenceSentence("Osbert Sitwell met Walter at Eton.", 0, "The Sitwells", url="local://a"),
                            EvidenceSentence("Sir Walter was educated at Harrow.", 1, "Other", url="local://b")])
    assert lone.of("local://b", "Sir Walter was educated at Harrow.").link is None


def test_an_answer_covers_the_words_its_kind_answers():
    """"At what pressure was the keg left to carbonate?" — "Keg fridge, 12 psi, leave 10 days to carbonate." never
    says "pressure"; its answer "12 psi" is one (userdocs-b: three right answers held back under the gate). Pool
    train held out: answers kept at the gate unchanged (31 of 32 right; wrong ones 111 of 167)."""
    log = "Kegged: one 19 L corny. Keg fridge, 12 psi, leave 10 days to carbonate."
    reader = RelevanceReader("At what pressure was the pale ale keg left to carbonate?",
                             [EvidenceSentence(log, 0, "club-brew-log", url="local://log")])
    plain = reader.of("local://log", log).score
    assert reader.of_answer("12 psi", "local://log", log).score > plain
    assert reader.of_answer("10 days", "local://log", log).score == plain  # a duration is no pressure
    deadline = RelevanceReader("What's the deadline for paying the plot rent?",
                               [EvidenceSentence("Rent is due on 29 September 2024.", 0, "AGM", url="local://agm")])
    assert deadline.of_answer("29 September 2024", "local://agm", "Rent is due on 29 September 2024.").score > \
        deadline.of("local://agm", "Rent is due on 29 September 2024.").score


def test_a_table_row_is_about_the_question_only_when_its_cells_name_what_it_asks_about():
    """A row is about one thing: the crank bolts' torque row does not answer a question about pedals because the table
    is the handbook's torque table; the pedals' row does, and a row named by a chain's first unit does too."""
    header = ("Fastener", "Torque", "Tool")
    rows = [EvidenceSentence("| Hollowtech II crank pinch bolts | 12 Nm | TW-5.2 |", 0, "Volunteer Handbook", url="h",
                             kind="row", header=header),
            EvidenceSentence("| Pedals | 35 Nm | TW-6.2 |", 0, "Volunteer Handbook", url="h", kind="row",
                             header=header, position=1)]
    question = "What torque does the volunteer handbook give for pedals?"
    assert RelevanceReader(question, rows[:1]).of("h", rows[0].text).score == 0.0
    assert RelevanceReader(question, rows).of("h", rows[1].text).score >= ABOUT
    # the last hop: the row of the telescope the first unit names
    scope = ("ID", "Telescope", "Weight")
    units = [EvidenceSentence("T03 (Sky-Watcher Skyliner 200P) is away for repair of its finder bracket.", 0,
                              "Loan status", url="s"),
             EvidenceSentence("| T03 | Sky-Watcher Skyliner 200P | 24.5 kg |", 1, "Borrow a telescope", url="b",
                              kind="row", header=scope)]
    reader = RelevanceReader("What is the weight of the loan telescope that is away for repair of its finder bracket?",
                             units)
    linked = reader.of("b", units[1].text)
    assert linked.score >= ABOUT and linked.link is units[0]


def test_a_unit_whose_source_writes_none_of_the_questions_codes_is_not_about_it():
    """A code the question names (a model year, a version, a quantity) names one thing: a unit of a source that writes
    none of them answers about another thing (pool train, simulated evidence: kept wrong answers 419 → 406, right
    116 → 115; 200 held-out questions replayed: wrong 108 → 105, right 28 = 28)."""
    musket = "The Springfield Model 1812 Musket was produced at the Springfield Armory in Massachusetts."
    reader = RelevanceReader("Where was the armory at which the Model 1840 flintlock musket was produced located?",
                             [EvidenceSentence(musket, 0, "Springfield Model 1812 Musket", url="local://m")])
    missed = reader.of("local://m", musket)
    assert missed.score == 0.0 and missed.code_missed
    compost = "| Levington F2 compost | 75 L bag | 6.10 | 7.25 |"
    bag = RelevanceReader("What do members pay at the hut for a 50-litre bag of compost?",
                          [EvidenceSentence(compost, 0, "Trading hut prices", url="local://hut")])
    assert bag.of("local://hut", compost).code_missed
    # "26 episodes" writes the "26-episode" series' number; the page's other sentence may be the one that writes it
    page = [EvidenceSentence("The World at War is a British television series of 26 episodes.", 0, "The World at War",
                             url="local://w"),
            EvidenceSentence("It was narrated by Laurence Olivier.", 0, "The World at War", url="local://w",
                             position=1)]
    series = RelevanceReader("Who narrated the 26-episode series The World at War?", page)
    assert series.of("local://w", page[1].text).score >= ABOUT


def test_a_day_or_an_ordinal_the_question_names_is_no_code_a_unit_must_write():
    """"the meeting after the one on 10 September" is answered by a unit writing another day; "4th Baronet" ranks."""
    meeting = "Next committee meeting: 8th October 2024, club room."
    after = RelevanceReader("When is the next committee meeting after the one on 10 September 2024?",
                            [EvidenceSentence(meeting, 0, "Committee minutes", url="local://c")])
    assert not after.codes and after.of("local://c", meeting).score >= ABOUT
    castle = "Skelmorlie Castle stands on the shore of the Firth of Clyde."
    baronet = RelevanceReader("Which shore is Skelmorlie Castle of Sir James Montgomery, 4th Baronet, on?",
                              [EvidenceSentence(castle, 0, "Skelmorlie Castle", url="local://s")])
    assert not baronet.codes


def test_a_chain_may_write_the_code_for_its_last_unit():
    """The first unit of a chain writes the question's year; the answer's unit, on the bridge's page, need not."""
    film = "The 2001 film The Touch featured Yu Rongguang and was directed by Peter Pau."
    born = "Peter Pau was born in Hong Kong."
    reader = RelevanceReader("Where was the director of the 2001 film that featured Yu Rongguang born?",
                             [EvidenceSentence(film, 0, "The Touch (2001 film)", url="local://f"),
                              EvidenceSentence(born, 1, "Peter Pau", url="local://p")])
    linked = reader.of("local://p", born)
    assert linked.score >= ABOUT and linked.link is not None and not linked.code_missed


def _link(question: str, first: tuple[str, str], second: tuple[str, str]) -> EvidenceSentence | None:
    """The unit the second (text, title) is linked through, read with the first, for the question."""
    units = [EvidenceSentence(text, i, title, url=f"local://{i}") for i, (text, title) in enumerate((first, second))]
    return RelevanceReader(question, units).of("local://1", second[0]).link


def test_a_chain_goes_through_a_name_the_question_does_not_give_and_not_a_nationality_or_an_ordinal():
    """Linking two units by the question's own name, a nationality or an ordinal makes no chain (held-out pool train,
    the 74 chained answers of 200: through a name the question gives 4 right / 14 wrong, through a nationality or an
    ordinal 0 / 5; pool train, simulated evidence: kept wrong answers 406 → 389, right 115 = 115)."""
    assert _link("Which artist was featured on smooth jazz stations with Kenny G and the performer of Saxophonic?",
                 ("Smooth jazz musicians Kenny G and Dave Koz come from the city.", "Seattle"),
                 ("For years, artists like George Benson, Kenny G and Dave Koz had crossover hits on smooth jazz "
                  "stations.", "Smooth jazz")) is None
    assert _link("What is the financial group which created the Sporting Portugal Fund?",
                 ("Sporting Portugal Fund is a Portuguese football investment fund.", "Sporting Portugal Fund"),
                 ("The Espirito Santo Financial Group is a Portuguese holding company.",
                  "Espirito Santo Financial Group")) is None
    assert _link("Which Democrat running for president holds the 6th district seat in Maryland?",
                 ("He placed fifth in the 6th district primary of the Democrats running for president in Alabama.",
                  "Someone"),
                 ("Delaney holds the 6th seat.", "John Delaney")) is None
