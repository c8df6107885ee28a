"""Yes/no questions about a shared property ("the same country", "both English"), decided from each
thing's own source (agent/reader/answers/shared_property.py), and the graph path that answers with the decision."""

from __future__ import annotations

from deepresearch.agent.graph.events import OptionDecided, read_events
from deepresearch.agent.graph.run import ResearchRuntime, research
from deepresearch.agent.reader import EvidenceSentence
from deepresearch.agent.reader.answers.shared_property import asked_country, compared_noun, decide_shared, named_things

from .conftest import agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel

FAGEN = "Donald Jay Fagen (born January 10, 1948) is an American musician and a co-founder of Steely Dan."
LAVERNE = "Lauren Laverne (born 28 April 1978) is an English radio DJ, television presenter and author."
SIMON = "Paul Simon (born October 13, 1941) is an American musician, singer-songwriter and actor."


def sent(text: str, title: str, position: int = 0) -> EvidenceSentence:
    return EvidenceSentence(text, 0, title, url=f"doc:{title}", position=position)


def test_the_question_names_what_is_compared_and_the_two_things():
    assert compared_noun("Are Catasetum and Origanum in the same family?") == "family"
    assert compared_noun("Who was born first, A or B?") is None
    assert asked_country("Were H. G. Wells and Rubén Darío both English?") == "united kingdom"
    assert asked_country("Are Karl Shapiro and Elie Wiesel both American writers?") == "united states"
    # The whole title, not its parts ("Out", "Place"); the leading capital of the question is not a name.
    assert named_things("Are the documentaries Out of Place and The Mosuo Sisters by the same director?") == [
        "Out of Place", "Mosuo Sisters"]


def test_different_nationalities_answer_no_citing_the_first_things_sentence():
    evidence = [sent(FAGEN, "Donald Fagen"), sent(LAVERNE, "Lauren Laverne")]
    choice = decide_shared("Are Donald Fagen and Lauren Laverne of the same nationality?", evidence)
    assert choice is not None and (choice.option, choice.rule) == ("no", "shared")
    assert choice.quote == FAGEN and choice.url == "doc:Donald Fagen"


def test_the_same_country_by_demonym_and_by_name_answers_yes():
    evidence = [sent(SIMON, "Paul Simon"),
                sent("Black Rebel Motorcycle Club is a rock band from San Francisco, United States.",
                     "Black Rebel Motorcycle Club")]
    choice = decide_shared("Are Paul Simon and Black Rebel Motorcycle Club from the same country?", evidence)
    assert choice is not None and choice.option == "yes"


def test_the_value_next_to_the_compared_word_decides_a_family_or_a_province():
    plants = [sent("Ecballium is a genus of flowering plants in the family Cucurbitaceae.", "Ecballium"),
              sent("Elatostema is a genus of plants in the nettle family Urticaceae.", "Elatostema")]
    assert decide_shared("Are Ecballium and Elatostema in the same family?", plants).option == "no"
    cities = [sent("Nantong is a prefecture-level city in Jiangsu province, China.", "Nantong"),
              sent("Suzhou is a major city in southeastern Jiangsu province of East China.", "Suzhou")]
    assert decide_shared("Are Nantong and Suzhou situated in the same province?", cities).option == "yes"


def test_both_of_a_nationality_is_no_when_one_is_from_elsewhere_and_yes_only_when_both_are():
    wells = sent("Herbert George Wells was an English writer.", "H. G. Wells")
    lorca = sent("Federico García Lorca was a Spanish poet, playwright and theatre director.", "Federico García Lorca")
    choice = decide_shared("Were H. G. Wells and Federico García Lorca both English?", [wells, lorca])
    assert choice is not None and choice.option == "no" and choice.quote == lorca.text
    both = decide_shared("Are Donald Fagen and Paul Simon both American musicians?",
                         [sent(FAGEN, "Donald Fagen"), sent(SIMON, "Paul Simon")])
    assert both is not None and both.option == "yes"
    # One of them unknown: "yes" is not decided on half the evidence.
    assert decide_shared("Are Donald Fagen and Paul Simon both American musicians?", [sent(FAGEN, "Donald Fagen")]) \
        is None


def test_no_decision_without_both_own_sources_or_without_a_value():
    only_one = [sent(FAGEN, "Donald Fagen"), sent("Laverne presented a show in 2010.", "BBC Radio 6 Music")]
    assert decide_shared("Are Donald Fagen and Lauren Laverne of the same nationality?", only_one) is None
    no_value = [sent("Aladdin is a 1992 animated film.", "Aladdin"),
                sent("Song of the South is a 1946 film.", "Song of the South")]
    assert decide_shared("Are Aladdin and Song of the South produced by the same company?", no_value) is None
    assert decide_shared("Are Donald Fagen and Lauren Laverne musicians?", [sent(FAGEN, "Donald Fagen")]) is None


async def test_a_same_country_question_is_answered_with_the_decision_and_cites_it(store):
    toolbox = DictToolbox({"fagen": ("Donald Fagen", FAGEN), "laverne": ("Lauren Laverne", LAVERNE)})
    question = "Are Donald Fagen and Lauren Laverne of the same nationality?"
    model = ScriptedModel(default_script(plan_queries=("Donald Fagen", "Lauren Laverne")))
    result = await research(question, ResearchRuntime(model, toolbox, store, agent_settings(max_rounds=2)))
    writer = [request for role, request in model.requests if role == "writer"][-1]
    # Without the decision the writer's choice would be yes or no, and the scripted writer takes the first.
    assert writer.json_schema["properties"]["answer"]["enum"] == ["no"]
    assert result.answer == "no"
    # A bare "no" is not a claim a quote can support, so the answer carries no citation; the points cite
    # both sources, and the trace keeps the sentence that decided.
    assert "**Answer:** no\n" in result.report
    assert {c["title"] for c in result.citations if c["verified"]} == {"Donald Fagen", "Lauren Laverne"}
    decided = read_events(store, result.run_id, OptionDecided)
    assert [(d.options, d.option, d.rule, d.quote) for d in decided] == [(["yes", "no"], "no", "shared", FAGEN)]
