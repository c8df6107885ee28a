"""The answer's form read from the question, and the writer's grammar that enforces it."""

from __future__ import annotations

import pytest
from deepresearch.agent.graph.run import ResearchRuntime, research
from deepresearch.agent.graph.schemas import writer_schema
from deepresearch.agent.reader import answer_choices

from .conftest import agent_settings, default_script, user_text
from .fakes import ScriptedModel


@pytest.mark.parametrize(("question", "choices"), [
    ("Were Daniel Mann and Todd Solondz both directors?", ["yes", "no"]),
    ("  is  Paris the capital of France ?", ["yes", "no"]),
    ("Which company is based in Kentucky, Vocelli Pizza or Fazoli's?", ["Vocelli Pizza", "Fazoli's"]),
    ("Which is considered a giant dog breed, the Leonberger or the Basset Hound?", ["Leonberger", "Basset Hound"]),
    # No comma marks the alternatives: the capitalised runs either side of the "or" are the options.
    ("Was Pepper Keenan or Rob Parissi born first?", ["Pepper Keenan", "Rob Parissi"]),
    ("Who is older Carrie Akre or Shifty Shellshock?", ["Carrie Akre", "Shifty Shellshock"]),
    ("Which documentary Hacking Democracy or The Memory of Justice was produced first ?",
     ["Hacking Democracy", "Memory of Justice"]),
    ("Is the Marsilea or the Brabejum the genus of more individual species of plants?", ["Marsilea", "Brabejum"]),
    ("Did Franki Valli sing with Hellogoodbye or The Four Seasons?", ["Hellogoodbye", "Four Seasons"]),
    # One side is no name: no constraint.
    ("Which came first the forming of The Dandy Warhols or the birth of Robert Young?", None),
    ("Who directed Titanic or its sequel?", None),
    ("Was the film released in 1997 or 1998?", ["1997", "1998"]),
    ("Who directed Titanic?", None),
    # sentences that only tell come before the one that asks
    ("My daughter is 12. Can she ride the lift on her own?", ["yes", "no"]),
    ("Our IT person needs the MAC address of the router. What is it?", None),
    ("Which is older, A or a?", None),  # the same option twice is no choice
    ("", None),
])
def test_answer_choices(question, choices):
    assert answer_choices(question) == choices


def test_writer_schema_enumerates_the_choices_or_only_not_found():
    schema = writer_schema(2, choices=["yes", "no"])
    assert schema["properties"]["answer"] == {"type": "string", "enum": ["yes", "no"]}
    # Offered answers passed the judgement: abstaining is its decision, not the writer's.
    assert writer_schema(2, choices=["1689", "1640"])["properties"]["answer"]["enum"] == ["1689", "1640"]
    # With no candidate at all, "not found" is the only answer the grammar allows: nothing is written freely.
    assert writer_schema(2, choices=[])["properties"]["answer"]["enum"] == ["not found"]


async def test_a_yes_no_question_reaches_the_writer_with_its_choices(toolbox, store):
    script = default_script()

    def answer_yes(role, request):
        reply = script(role, request)
        return {**reply, "answer": "yes"} if role == "writer" else reply

    model = ScriptedModel(answer_yes)
    # a question no unit of the evidence states: the model chooses (a stated one is decided: test_yes_no.py)
    runtime = ResearchRuntime(model, toolbox, store, agent_settings())
    result = await research("Did Ada Lovelace ever visit Paris?", runtime)
    writer = [request for role, request in model.requests if role == "writer"][-1]
    assert writer.json_schema["properties"]["answer"]["enum"] == ["yes", "no"]
    assert "Candidates:\n- yes\n- no\n" in user_text(writer)
    assert result.answer == "yes"


@pytest.mark.parametrize(("question", "choices"), [
    ("Which genus has more species: Sarracenia or Butea?", ["Sarracenia", "Butea"]),
    ("Which magazine has more issues per month, Club or Pro Football Weekly", ["Club", "Pro Football Weekly"]),
    ("Which director, John Schlesinger or Barbara Albert, was also a writer?", ["John Schlesinger", "Barbara Albert"]),
    ("Between Gareth Evans and Pierre Chenal, who's had a more diverse career?", ["Gareth Evans", "Pierre Chenal"]),
    ("In between Liberty and MIT Technology Review which has a circulation of over 200,000?",
     ["Liberty", "MIT Technology Review"]),
    ("Which music group has the most members, DC Talk, or Manchester Orchestra?", ["DC Talk", "Manchester Orchestra"]),
    # A free question that merely contains "or" and a comma is not a choice.
    ("What did the author of Dune, Frank Herbert, write?", None),
    # How people ask about their own things (userdocs-b): a clause about an option is not part of its name, and a
    # clause that sets a yes/no question up does not hide it.
    ("Between the Citra and the Mosaic we've got in the freezer, which has more alpha acid?", ["Citra", "Mosaic"]),
    ("If I borrow the club's Foundry 10.5, will it work from a normal 120-volt socket?", ["yes", "no"]),
    ("Now that the competition has moved, is it still $8 to enter a beer?", ["yes", "no"]),
    ("In 1990, who won the cup?", None),
    # "of"/"among" like "between"; a comma before the "or"; two names after the comma joined by "and"; alternatives
    # led by their articles at the end of a yes/no-shaped question. A property both share is no choice.
    ("Of the retired tennis players Ross Case and Slobodan Živojinović, which player ranked higher?",
     ["Ross Case", "Slobodan Živojinović"]),
    ("Among Kele Okereke and Jon Hume who made the band Evermore?", ["Kele Okereke", "Jon Hume"]),
    ("Which battle, the Battle of Cold Harbor, or the Second Battle of Bull Run, was fought first?",
     ["Battle of Cold Harbor", "Second Battle of Bull Run"]),
    ("Which genus has more species, Bactris and Epigaea?", ["Bactris", "Epigaea"]),
    ("Which movie was released first, 'Mean Girls' or the remake of 'April Fool's Day'?",
     ["Mean Girls", "April Fool's Day"]),
    ("Is the deposit bigger for borrowing the hedge trimmer or the rotavator?", ["hedge trimmer", "rotavator"]),
    ("Is the battery larger in the Pixel 8 or the iPhone 15?", ["Pixel 8", "iPhone 15"]),
    ("Is the red kettle or the blue kettle heavier?", ["red kettle", "blue kettle"]),
    ("Was the rotavator or the hedge trimmer bought first?", None),  # "bought first" is no option's name
    ("Is the deposit bigger for the rotavator or the hedge trimmer?", ["rotavator", "hedge trimmer"]),
    ("Which continent are both magazines, Sayidaty and Closer published?", None),
    ("Who is descended from William, 4th Lord Livingston and was a statesman from New York City?", None),
    ("Which artist was featured on jazz stations, along with Kenny G and the performer of Saxophonic?", None),
])
def test_answer_choices_where_the_alternatives_stand_elsewhere(question, choices):
    assert answer_choices(question) == choices
