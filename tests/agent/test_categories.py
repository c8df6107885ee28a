"""Questions that ask what kind of thing something is: answered by the class a source puts it in, not a name."""

from __future__ import annotations

from deepresearch.agent.reader import EvidenceSentence, answer_options
from deepresearch.agent.reader.language.categories import asks_category, asks_shared, category_spans


def _classes(sentence: str) -> list[str]:
    return [s.text for s in category_spans(sentence)]


def test_the_class_after_the_copula_with_and_without_its_nationality():
    assert _classes("Andrew and Jeremy Get Married is a 2004 British documentary film written and directed by Don "
                    "Boyd.") == ["British documentary film", "documentary film"]
    assert _classes("Careers is a board game first manufactured by Parker Brothers in 1955.") == ["board game"]
    assert _classes("Bitter Jester is a documentary starring Maija DiGiorgio.") == ["documentary"]
    # a manual's and a note's sentences, not an encyclopaedia's
    assert _classes("The MLX90614 is an infrared thermometer for non-contact readings.") == ["infrared thermometer"]
    assert _classes("Our Brewzilla, a 35-litre all-in-one brewing system, lives in the garage.") == [
        "all-in-one brewing system"]


def test_a_list_of_classes_gives_each():
    assert _classes("Marc Bolan was an English singer-songwriter, musician, guitarist, and poet.") == [
        "English singer-songwriter", "singer-songwriter", "musician", "guitarist", "poet"]
    assert _classes("She is a Russian conceptual artist and political activist.") == [
        "Russian conceptual artist", "conceptual artist", "political activist"]


def test_names_and_plain_statements_give_no_class():
    assert _classes("He was born in Boston and moved to Atlanta in 1997.") == []
    assert _classes("The winner is the United States Football League.") == []  # a name: the name spans have it


def test_which_questions_ask_a_kind():
    assert asks_category("Both Andrew and Jeremy Get Married and The Last Lions are what type of films?") == "films"
    assert asks_category("What profession did Willi Forst and Elmer Clifton share?") == "profession"
    assert asks_category("What kind of sensor is the MLX90614?") == "sensor"
    assert asks_category("Which professional footballer played for Kadji Sports Academy?") is None
    assert asks_category("Who designed the Analytical Engine?") is None
    assert asks_shared("What profession do A and B have in common?") and not asks_shared("What kind of bug is it?")


def test_a_kind_question_is_answered_by_a_class_not_a_name():
    units = [EvidenceSentence("The MLX90614 is an infrared thermometer made by Melexis in Belgium.", 0,
                              "Sensors we use")]
    top = answer_options("What kind of sensor is the MLX90614?", units, pool=5).candidates[0]
    assert top.text == "infrared thermometer"


def test_the_class_two_things_share_is_their_common_kind():
    units = [EvidenceSentence("Chris Jericho is a Canadian-American professional wrestler, media personality and "
                              "musician.", 0, "Chris Jericho", url="u1"),
             EvidenceSentence("Gary Barlow is an English singer, songwriter, record producer and musician.", 1,
                              "Gary Barlow", url="u2")]
    q = "What type of profession does Chris Jericho and Gary Barlow have in common?"
    assert answer_options(q, units, pool=5).candidates[0].text == "musician"
