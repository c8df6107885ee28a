"""Choosing between a question's alternatives from the evidence (agent/reader/answers/comparison.py), and the graph path
that reads both options' sources and answers with the decided option, citing the deciding sentence."""

from __future__ import annotations

from deepresearch.agent.graph.events import OptionDecided, read_events
from deepresearch.agent.graph.run import ResearchRuntime, research
from deepresearch.agent.reader import EvidenceSentence
from deepresearch.agent.reader.answers.comparison import asked_count, asked_order, choose_option, option_sentences

from .conftest import agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel


def sent(text: str, title: str, url: str = "") -> EvidenceSentence:
    return EvidenceSentence(text, 0, title, url=url or title)


BANDS = [
    sent("Soil is an American rock band that was formed in Chicago in 1997.", "Soil"),
    sent("Drowning Pool is an American rock band formed in Dallas in 1996.", "Drowning Pool"),
    sent("In 2001 Soil toured with Drowning Pool.", "Ozzfest"),
]


def test_the_earlier_year_wins_a_which_came_first_question():
    choice = choose_option("Which band was formed first, Soil or Drowning Pool?", ["Soil", "Drowning Pool"], BANDS)
    assert choice is not None and choice.option == "Drowning Pool" and choice.rule == "order"
    assert "1996" in choice.quote and choice.url == "Drowning Pool"
    later = choose_option("Which band was formed more recently, Soil or Drowning Pool?", ["Soil", "Drowning Pool"],
                          BANDS)
    assert later is not None and later.option == "Soil"


def test_a_question_about_dying_compares_death_years_not_birth_years():
    people = [sent("Agatha Christie (15 September 1890 – 12 January 1976) was an English writer.", "Agatha Christie"),
              sent("Clement Greenberg (January 16, 1909 – May 7, 1994) was an American essayist.", "Clement Greenberg")]
    options = ["Agatha Christie", "Clement Greenberg"]
    assert choose_option("Which writer died later, Agatha Christie or Clement Greenberg?", options,
                         people).option == "Clement Greenberg"
    # Born first: the first (birth) year decides.
    assert choose_option("Who was born first, Agatha Christie or Clement Greenberg?", options,
                         people).option == "Agatha Christie"


def test_an_options_own_source_dates_it_before_a_sentence_that_merely_names_it():
    evidence = [sent("Catan Histories is a 2006 board game based on Catan.", "Catan Histories"),
                sent("Catan is a board game first published in 1995.", "Catan"),
                sent("Pirate's Cove is a board game published in 2002.", "Pirate's Cove")]
    assert [s.title for s in option_sentences("Catan", evidence)] == ["Catan", "Catan Histories"]
    choice = choose_option("Which board game was published most recently, Pirate's Cove or Catan?",
                           ["Pirate's Cove", "Catan"], evidence)
    assert choice is not None and choice.option == "Pirate's Cove"


def test_a_property_decides_only_with_a_clear_margin():
    evidence = [sent("The NorthCap University is an autonomous university in Gurugram, Haryana, India.",
                     "The NorthCap University"),
                sent("The University of the Philippines is a university system in the Philippines.",
                     "University of the Philippines")]
    options = ["University of the Philippines", "The NorthCap University"]
    # The question's one property word ("India") is carried by one option's sentence only: that decides.
    located = choose_option("Which is located in India, University of the Philippines or The NorthCap University?",
                            options, evidence)
    assert located is not None and located.option == "The NorthCap University"
    # One shared word more out of several is a coin flip on measurement: no decision.
    assert choose_option("Which is a university in Haryana, India, University of the Philippines or "
                         "The NorthCap University?", options,
                         [*evidence, sent("The University of the Philippines has a campus in India.",
                                          "University of the Philippines")]) is None
    decided = choose_option("Which is an autonomous university in Haryana, University of the Philippines or "
                            "The NorthCap University?", options, evidence)
    assert decided is not None and decided.option == "The NorthCap University" and decided.rule == "property"


GENERA = [sent("Othonna is a genus of about 120 species of flowering plants.", "Othonna"),
          sent("Othonna was described in 1753.", "Othonna"),
          sent("Stangeria is a genus with one species, found in South Africa.", "Stangeria")]


def test_a_count_question_compares_the_numbers_next_to_the_counted_noun():
    options = ["Stangeria", "Othonna"]
    more = choose_option("Which genus has more species, Stangeria or Othonna?", options, GENERA)
    assert more is not None and (more.option, more.rule) == ("Othonna", "count") and "120" in more.quote
    fewer = choose_option("Which genus has fewer species, Stangeria or Othonna?", options, GENERA)
    assert fewer is not None and fewer.option == "Stangeria"
    towns = [sent("Qinzhou has a population of 3.2 million.", "Qinzhou"),
             sent("The population of Jingjiang was 684,360 in 2010.", "Jingjiang")]
    larger = choose_option("Which has a higher population, Qinzhou or Jingjiang?", ["Qinzhou", "Jingjiang"], towns)
    assert larger is not None and larger.option == "Qinzhou"


def test_a_year_is_not_a_count():
    medals = [sent("She won the 1988 Olympic bronze medal.", "Debi Thomas"),
              sent("She won two Olympic gold medals.", "Katarina Witt")]
    # Debi Thomas's sentence gives no count (1988 is a year), so the count rule cannot decide.
    choice = choose_option("Who has won more medals, Debi Thomas or Katarina Witt?",
                           ["Debi Thomas", "Katarina Witt"], medals)
    assert choice is None or choice.rule != "count"


def test_no_decision_without_evidence_for_both_options_or_with_equal_years():
    assert choose_option("Which band was formed first, Soil or Korn?", ["Soil", "Korn"], BANDS) is None
    same_year = [sent("A is a band formed in 1990.", "A"), sent("B is a band formed in 1990.", "B")]
    assert choose_option("Which band was formed first, A or B?", ["A", "B"], same_year) is None
    assert choose_option("Which is older, A, B or C?", ["A"], same_year) is None


def test_asked_order():
    assert asked_order("Who was born first, A or B?") == "earliest"
    assert asked_order("Which is older, A or B?") == "earliest"
    assert asked_order("Who is younger, A or B?") == "latest"
    assert asked_order("Which was released more recently, A or B?") == "latest"
    assert asked_order("Which is located in India, A or B?") is None


def test_asked_count():
    assert asked_count("Which genus has more species, A or B?") == ("speci", False)
    assert asked_count("Who has won the most Olympic medals, A or B?") == ("medal", False)
    assert asked_count("Which has the smaller population, A or B?") == ("popul", True)
    # "more Grand Slam titles": the counted word is not the capitalised name after the comparative.
    assert asked_count("Who has won more Grand Slam titles, A or B?") is None
    assert asked_count("Which is located in India, A or B?") is None


COMPARED = {
    "s1": ("Soil", "Soil is an American rock band that was formed in Chicago, Illinois in 1997."),
    "s2": ("Drowning Pool", "Drowning Pool is an American rock band formed in Dallas, Texas in 1996."),
}


async def test_an_a_or_b_question_searches_both_options_and_answers_with_the_decided_one(store):
    toolbox = DictToolbox(dict(COMPARED))
    question = "Which American rock band was formed first, Soil or Drowning Pool?"
    script = default_script(plan_queries=("Soil",))
    model = ScriptedModel(script)
    result = await research(question, ResearchRuntime(model, toolbox, store, agent_settings(max_rounds=3)))
    searches = [raw["query"] for name, raw in toolbox.invocations if name == "search"]
    # The plan searched one option; the follow-up searched the other, once, with no model call to choose it.
    assert searches.count("Soil") == 1 and searches.count("Drowning Pool") == 1
    assert model.calls("coordinator") == 0
    writer = [request for role, request in model.requests if role == "writer"][-1]
    assert writer.json_schema["properties"]["answer"]["enum"] == ["Drowning Pool"]
    assert result.answer == "Drowning Pool"
    answer_cite = result.citations[0]
    assert "1996" in answer_cite["quote"] and answer_cite["verified"]
    decided = read_events(store, result.run_id, OptionDecided)
    assert [(d.option, d.rule) for d in decided] == [("Drowning Pool", "order")]


def test_a_comparative_over_table_rows_compares_the_column_the_question_names():
    """A kitchen's appliance list: "heavier" reads the weight column, "the deposit … smaller" the deposit column, and
    a comparative no column answers ("cheaper" with no price) decides nothing."""
    from deepresearch.agent.reader import evidence_units
    from deepresearch.tools.extract.tables import csv_to_text

    table = ("Tag,Appliance,Weight (kg),Deposit\nK-07,Stand mixer,9.8,£40\nK-12,Bread maker,6.1,£55\n")
    rows = evidence_units(csv_to_text(table), 0, "appliances.csv", "kitchen/appliances.csv")
    heavier = choose_option("Which is heavier, the stand mixer or the bread maker?", ["stand mixer", "bread maker"],
                            rows)
    assert heavier is not None and heavier.option == "stand mixer" and heavier.rule == "measure"
    assert "9.8" in heavier.quote
    assert choose_option("Is the deposit smaller for K-07 or K-12?", ["K-07", "K-12"], rows).option == "K-07"
    assert choose_option("Which is cheaper, K-07 or K-12?", ["K-07", "K-12"], rows) is None
