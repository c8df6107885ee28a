"""Question kinds: a factoid question wants one answer span, an open one a report; and the parts an open question
covers one by one. General English wording of every shape, both kinds."""

from __future__ import annotations

import pytest
from deepresearch.agent.graph.report.relevance import FindingRelevance
from deepresearch.agent.graph.state import Finding
from deepresearch.agent.reader import (
    EvidenceSentence,
    RelevanceReader,
    is_masthead,
    question_kind,
    question_parts,
    speaks_of,
)
from deepresearch.agent.reader.language.words import stem
from deepresearch.agent.reader.trust.relevance import question_words

OPEN = [
    "What are the main differences between the Analytical Engine and the Difference Engine?",
    "What is the difference between a virus and a bacterium?",
    "Compare Python and Java.",
    "compare the Jetsons with the Flintstones in terms of ratings",
    "Contrast baroque and classical music",
    "Explain how a bicycle derailleur works",
    "Please explain what nandrolone is.",
    "Can you describe the life of Ada Lovelace?",
    "Describe Ada Lovelace",
    "Summarise the history of The Jetsons",
    "Summarize the plot of Hamlet.",
    "Give me an overview of the Texas Tech Red Raiders football seasons",
    "Give a summary of the 2008 Summer Olympics",
    "List the films directed by Steven Spielberg.",
    "Outline the steps to repot a cactus",
    "Discuss the causes of the First World War.",
    "What are the pros and cons of nuclear power?",
    "What are the advantages and disadvantages of solar and wind power?",
    "What are the strengths and weaknesses of the 4-3 defence?",
    "How does photosynthesis work?",
    "How do vaccines affect the immune system?",
    "How does the Analytical Engine differ from the Difference Engine?",
    "How is a violin different from a viola?",
    "How do cats and dogs differ?",
    "Why did the Roman Empire fall?",
    "Why is the sky blue?",
    "Tell me about the Jetsons",
    "What do we know about the Tisch family?",
    "What are the main causes of inflation?",
    "What are some uses of nandrolone?",
    "In what ways did the printing press change Europe?",
    "What is the significance of the Magna Carta?",
    "What impact did the railways have on trade?",
    "Python vs Java for data science",
    "Emacs versus Vim: which is better for writing prose?",
    "How to change a bicycle tyre?",
    "I would like to know the similarities between frogs and toads",
]
FACTOID = [
    "Who designed the Analytical Engine?",
    "When was Ada Lovelace born?",
    "How many moons does Mars have?",
    "How old was Ada Lovelace when she died?",
    "How did Aphra Behn die?",
    "How long is the River Thames?",
    "Where is the first-aid kit kept?",
    "Which is older, the Leonberger or the Pug?",
    "Is the Pug older than the Leonberger?",
    "Were Trace Cyrus and Jizzy Pearl both vocalists?",
    "What is the capital of France?",
    "What are the names of the two founders of Apple?",
    "What year did the Difference Engine project start?",
    "In what year did the playwright who wrote The City Heiress die?",
    "What role did Ben Keaton play in the film East is East?",
    "What is the rule that makes a major difference between the National League and the American League?",
    "How to Eat, released in which year, is a book of English cuisine by Nigella Lawson",
    "List of The Jetsons episodes: which season had the most?",
    "Which team did the 2015 Texas Tech Red Raiders football team play in their bowl game?",
    "The Divided Heart was directed by whom?",
    "",
]


@pytest.mark.parametrize("question", OPEN)
def test_open_questions_want_a_report(question):
    assert question_kind(question) == "open"


@pytest.mark.parametrize("question", FACTOID)
def test_factoid_questions_want_one_answer(question):
    assert question_kind(question) == "factoid"


@pytest.mark.parametrize(("question", "parts"), [
    ("What are the main differences between the Analytical Engine and the Difference Engine?",
     ["Analytical Engine", "Difference Engine"]),
    ("What is the difference between a virus and a bacterium?", ["virus", "bacterium"]),
    ("Compare Python and Java.", ["Python", "Java"]),
    ("Compare the Jetsons with the Flintstones in terms of ratings", ["Jetsons", "Flintstones"]),
    ("Compare Rust, Go and Zig", ["Rust", "Go", "Zig"]),
    ("What are the main differences between the University of California, Berkeley and the University of "
     "California, San Francisco?", ["University of California, Berkeley", "University of California, San Francisco"]),
    ("How does the Analytical Engine differ from the Difference Engine?", ["Analytical Engine", "Difference Engine"]),
    ("How do cats and dogs differ?", ["cats", "dogs"]),
    ("Emacs versus Vim: which is better for writing prose?", ["Emacs", "Vim"]),
    ("What are the similarities between frogs and toads, and why do people confuse them?", ["frogs", "toads"]),
    ("Why did the Roman Empire fall?", []),
    ("Explain how a bicycle derailleur works", []),
    ("Who designed the Analytical Engine?", []),
])
def test_the_parts_an_open_question_covers(question, parts):
    assert question_parts(question) == parts


UC = ("What are the main differences between the University of California, Berkeley and the University of California, "
      "San Francisco?")
STORE = "What are the pros and cons of shopping at a warehouse store?"


@pytest.mark.parametrize(("question", "text", "title", "speaks"), [
    ("Describe Lisa Simpson.", "Lisa Marie Simpson is a fictional character.", "Lisa Simpson", True),
    ("Describe Lisa Simpson.", "She is the middle child of the family.", "Lisa Simpson", True),  # her own page
    # The page's title names her, but the sentence is about an episode.
    ("Describe Lisa Simpson.", "It was directed by Mike B. Anderson.", "The Secret War of Lisa Simpson", False),
    ("Compare The Jetsons and The Flintstones.", 'It was the counterpart to "The Flintstones".', "The Jetsons", True),
    ("Explain the intelligent design movement.", "It is a neo-creationist campaign.", "Intelligent design movement",
     True),
    ("Explain the intelligent design movement.", "It was founded by John Calvert.", "Intelligent Design Network",
     False),
    ("What are the main differences between a nuclear weapon and a thermonuclear weapon?",
     "The main difference is cost.", "Economics", False),  # only the question's frame words
    # Named in passing, or only in part: not what the quote is about (the demo corpus's open-question reports).
    (UC, "The University of California, Berkeley (also referred to as UC Berkeley) is a public research university.",
     "University of California, Berkeley", True),
    (UC, "The Port of San Francisco is a semi-independent organization that oversees the port facilities at San "
         "Francisco, California.", "Port of San Francisco", False),
    (UC, "The San Francisco State Gators football team represented San Francisco State University.",
     "San Francisco State Gators football", False),
    (UC, "Iodine-131 is an important radioisotope of iodine discovered by Glenn Seaborg and John Livingood in 1938 "
         "at the University of California, Berkeley.", "Iodine-131", False),
    (STORE, "Warehouse stores also offer a selection of merchandise sold in bulk.", "Warehouse store", True),
    (STORE, "A warehouse store is a food and grocery retailer.", "Retail", True),
    (STORE, "The mall is owned and managed by Melvin Simon and Associates, one of the largest developers of shopping "
            "malls in the United States and owner of Long Island's largest mall, Roosevelt Field in Garden City.",
     "Walt Whitman Shops", False),
    ("Summarise the Kitzmiller v. Dover Area School District case.", "The plaintiffs successfully argued that "
     "intelligent design is a form of creationism.", "Kitzmiller v. Dover Area School District", True),
    # a compared thing's name, not the words around it: "the loan telescopes T01" is T01
    ("What are the differences between the loan telescopes T01 and T02?",
     "| T01 | Sky-Watcher Heritage 130P | 130 mm | 650 mm |", "Borrow a telescope", True),
    ("Summarise what happened to the observatory's roll-off roof in August 2024.",
     "The rain sensor now closes the roof earlier.", "Committee meeting", True),
    # A part of the title is the subject's own page: the co-op's price list, the co-op's handbook.
    ("List the chains the Spoke & Sprocket Co-op stocks and their prices.",
     "| KMC X11-93 | chain | 11 | 5.65 mm | 116 | €24.50 | C2 |", "Spoke & Sprocket – parts we stock (member prices)",
     True),
    ("Summarise the safety rules in the co-op's volunteer handbook.",
     "Safety first: eye protection when using the compressor, the bench grinder or brake cleaner.",
     "Spoke & Sprocket Co-op – Volunteer Handbook", True),
    # On a page of the co-op's, a quote must still say something the question asks beyond the co-op's name.
    ("What are the pros and cons of becoming a member of the Spoke & Sprocket Co-op?",
     "Parked until we see the insurance renewal.", "Spoke & Sprocket Co-op — members' meeting", False),
    ("What are the pros and cons of becoming a member of the Spoke & Sprocket Co-op?",
     "Annual membership fee agreed at €25 (students €10).", "Spoke & Sprocket Co-op — members' meeting", True),
    # Named in its opening words, but saying nothing the question asks of it.
    ("What are the pros and cons of becoming a member of the Spoke & Sprocket Co-op?",
     "SPOKE & SPROCKET CO-OP -- WORKSHOP LOG 2024 one line per event.", "workshop-log", False),
    ("What are the pros and cons of becoming a member of the Spoke & Sprocket Co-op?",
     "The Spoke & Sprocket Co-op gives members the first hour of stand time free.", "Notes", True),
    # A part that is no subject of the question is no own page.
    ("Summarise the safety rules in the co-op's volunteer handbook.", "Bring your own 12 V power tank.",
     "ADAS Autumn Star Party 2024 – attendee guide", False),
    ("Describe Lisa Simpson.", "It was directed by Mike B. Anderson.", "The Simpsons (season 8) – The Secret War",
     False),
])
def test_a_quote_speaks_of_what_the_question_is_about(question, text, title, speaks):
    assert speaks_of(question, text, title) is speaks


def test_light_verbs_frame_an_open_question_only():
    units = [EvidenceSentence("Members get the first hour free.", 0, "Co-op")]
    assert "becom" not in question_words("What are the pros and cons of becoming a member of the co-op?", units).weights
    assert "becom" in question_words("Who did the member become?", units).weights  # a factoid's words all count


def test_closest_prefers_the_unit_that_says_it_itself():
    """Of units that cover the question equally through their page's title, the one that says it in its opening words
    comes first, not the page's first line."""
    title = "Spoke & Sprocket Co-op — members' meeting"
    units = [EvidenceSentence(t, 0, title, url="notes.md", position=i) for i, t in enumerate([
        "Date: Thursday 14 March 2024. Present: Ines Barros, Tomasz Wierzbicki, Dele Adeyemi and 6 members",
        "Annual membership fee agreed at €25 (students €10).",
    ])]
    reader = RelevanceReader("What are the pros and cons of becoming a member of the Spoke & Sprocket Co-op?", units)
    [(unit, score)] = reader.closest(1)
    assert unit.text.startswith("Annual membership fee") and score == 1.0


@pytest.mark.parametrize(("text", "masthead"), [
    ("Hollin Lane Allotment Society · pack for new plot-holders · revised January 2024 · Jean Harker", True),
    ("Volunteer Handbook · Revision 3 · 03/2024 · next review September 2024", True),
    ("SPOKE & SPROCKET CO-OP -- WORKSHOP LOG 2024 one line per event.", True),
    ("HOLLIN LANE ALLOTMENTS - SITE DIARY kept in the hut", True),
    ("The University of California, Berkeley is a public research university.", False),
    ("Members get the first hour free · for a year.", False),
    ("1600 BC -- c. 1046 BC", False),
    ("NASA - the agency - launched it.", False),
])
def test_a_documents_title_line_is_told_apart(text, masthead):
    assert is_masthead(text) is masthead


def test_a_documents_title_line_is_no_quote_of_a_report():
    """It names the subject and holds the question's words, and says nothing."""
    question = "Summarise the rules for new plot holders in the Hollin Lane Allotment Society's welcome pack."
    title = "Hollin Lane Allotments – welcome pack for new plot-holders"
    units = [EvidenceSentence(t, 0, title, url="w") for t in (
        "Hollin Lane Allotment Society · pack for new plot-holders · revised January 2024 · Jean Harker",
        "New plot holders must keep the plot cultivated; the rules of the Society say three quarters of it.")]
    relevant = FindingRelevance(question, RelevanceReader(question, units), [])
    found = [relevant(Finding(step_id=1, claim=u.text, quote=u.text, source="w", title=title, doc_id=None, start=-1,
                              end=-1)) for u in units]
    assert found == [False, True]


def test_a_notes_front_matter_is_no_quote_of_a_report():
    """"**Present:** … + 6 members" stands on the co-op's page and holds "members": it is who came, no pro or con."""
    from deepresearch.agent.graph.reading import read_sentences

    question = "What are the pros and cons of becoming a Spoke & Sprocket Co-op member?"
    title = "Spoke & Sprocket Co-op — members' meeting"
    text = (f"# {title}\n\n**Date:** Thursday 14 March 2024\n**Present:** Ines Barros, Rui Castro + 6 members\n\n"
            "## 1. Membership fee\n- Members get 20 % off parts and free use of the tools.\n")
    units = read_sentences([{"url": "m", "title": title, "rank": 0, "hop": False, "step_id": 1}], lambda u: text)
    relevant = FindingRelevance(question, RelevanceReader(question, units), [])
    found = {u.text: relevant(Finding(step_id=1, claim=u.text, quote=u.text, source="m", title=title, doc_id=None,
                                      start=-1, end=-1)) for u in units}
    assert found["**Present:** Ines Barros, Rui Castro + 6 members"] is False
    assert found["- Members get 20 % off parts and free use of the tools."] is True


def test_a_framing_word_is_a_word_not_a_stem():
    """"contrast" and "controller" share a five-letter stem, as "compare" and "company" do: only the framing word is
    left out of what a quote must cover."""
    assert stem("controller") in question_words("Summarise the notes on the observatory's roof controller.", []).weights
    assert stem("company") in question_words("Explain how a company pension works.", []).weights
    assert stem("compare") not in question_words("Compare the Skyliner 200P and the FlexTube.", []).weights


def test_the_particle_of_a_compound_is_no_question_word():
    """"roll-off roof" asks nothing about turning anything "off": an instruction on the roof's own page that only
    shares "off" with the question is no quote of what happened to the roof."""
    from deepresearch.agent.reader.language.words import content_words

    assert content_words("the roll-off roof, a sign-up sheet") == ["roll", "roof", "sign", "sheet"]
    assert content_words("turn it off") == ["turn", "off"]
    question = "Summarise what happened to the observatory's roll-off roof in August 2024."
    roof = [EvidenceSentence(t, 0, "Roll-off roof – notes", url="r", heading="If the roof sticks")
            for t in ("Turn the isolator off.", "The motor runs on 24 V.")]
    news = [EvidenceSentence(t, 1, "Club news", url="n") for t in (
        "The roof was resealed in August 2024.", "The roof leaked in June.", "The shed roof is felt.")]
    relevant = FindingRelevance(question, RelevanceReader(question, roof + news), [])
    found = {u.text: relevant(Finding(step_id=1, claim=u.text, quote=u.text, source=u.url, title=u.title, doc_id=None,
                                      start=-1, end=-1)) for u in roof + news}
    assert found["Turn the isolator off."] is False
    assert found["The roof was resealed in August 2024."] is True


def test_a_line_that_leads_in_to_a_list_is_no_quote_of_a_report():
    """"Agreed prices from 1 April 2024:" names the co-op's prices and the question's words; what it introduces is in
    the lines after it."""
    question = "List the chains the Spoke & Sprocket Co-op stocks and their prices."
    title = "Spoke & Sprocket Co-op — members' meeting"
    units = [EvidenceSentence(t, 0, title, url="m") for t in (
        "Agreed prices from 1 April 2024:", "**Agreed prices for chains:**",
        "The co-op stocks the KMC X11-93 chain at €18.40 for members.")]
    relevant = FindingRelevance(question, RelevanceReader(question, units), [])
    found = [relevant(Finding(step_id=1, claim=u.text, quote=u.text, source="m", title=title, doc_id=None, start=-1,
                              end=-1)) for u in units]
    assert found == [False, False, True]


def test_a_search_of_only_the_questions_names_makes_no_quote_relevant():
    """Under "List the chains the co-op stocks", the step that searched the co-op's name found its handbook: the
    volunteers' rota is about that search, not about chains. A question comparing two things searches each by its
    name, and a quote about one of them is what that step was for."""
    title = "Spoke & Sprocket Co-op – Volunteer Handbook"
    units = [EvidenceSentence(t, 0, title, url="h") for t in (
        "Spoke & Sprocket Co-op volunteers arrive 15 minutes before opening to set up the stands.",
        "The co-op stocks the KMC X11-93 chain at €18.40 for members.")]
    question = "List the chains the Spoke & Sprocket Co-op stocks and their prices."
    plan = [{"id": 2, "query": "Spoke & Sprocket Co-op"}]
    relevant = FindingRelevance(question, RelevanceReader(question, units), plan)
    found = [relevant(Finding(step_id=2, claim=u.text, quote=u.text, source="h", title=title, doc_id=None, start=-1,
                              end=-1)) for u in units]
    assert found == [False, True]
    question = "What are the main differences between the Spoke & Sprocket Co-op and the Hollin Lane Allotments?"
    relevant = FindingRelevance(question, RelevanceReader(question, units), plan)
    assert relevant(Finding(step_id=2, claim=units[0].text, quote=units[0].text, source="h", title=title, doc_id=None,
                            start=-1, end=-1))
