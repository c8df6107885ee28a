"""A multi-hop answer shows its chain, one cited step a line, and each link is checked: the first quote is about the
question and names the bridge, the answer's quote (or its page) names the bridge too. Over the demo corpus's own
paragraphs for the README's question."""

from __future__ import annotations

import json

from deepresearch.agent.config import AgentSettings
from deepresearch.app.runtime import demo_file

from .conftest import default_script, run
from .fakes import DictToolbox, ScriptedModel

QUESTION = "In what year did the playwright who wrote The City Heiress die?"


def demo_docs(*titles: str) -> dict[str, tuple[str, str]]:
    rows = [json.loads(line) for line in demo_file("corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["id"]: (r["title"], r["text"]) for r in rows if r["title"] in titles}


async def test_the_chain_is_shown_and_checked_link_by_link(store):
    toolbox = DictToolbox(demo_docs("The City Heiress", "Aphra Behn"))
    model = ScriptedModel(default_script(("The City Heiress playwright", "Aphra Behn")))
    result = await run(model, toolbox, store, question=QUESTION, settings=AgentSettings(min_answer_confidence=0.0))
    assert result.answer == "1689", result.report
    answer, chain = result.citations[0], result.citations[1]
    assert answer["verified"] and "1689" in answer["quote"] and answer["title"] == "Aphra Behn"
    # The first step: a quote about The City Heiress that names the bridge, cited for the bridge.
    assert chain["verified"] and chain["claim"] == "Aphra Behn" and "The City Heiress" in chain["quote"]
    assert "Aphra Behn" in chain["quote"]
    assert f"**How:** {chain['quote']} [2] · {answer['quote']} [1]" in result.report
    judgement = store.events(result.run_id, "citation_check")[0].payload["judgement"]
    assert judgement["bridge"] == "Aphra Behn" and judgement["link"] == chain["quote"]


async def test_a_one_hop_answer_has_no_chain(store):
    toolbox = DictToolbox(demo_docs("Aphra Behn"))
    model = ScriptedModel(default_script(("Aphra Behn death",)))
    result = await run(model, toolbox, store, question="In what year did Aphra Behn die?",
                       settings=AgentSettings(min_answer_confidence=0.0))
    assert result.answer == "1689" and "**How:**" not in result.report
    assert all(c["claim"] != "Aphra Behn" for c in result.citations[1:])
