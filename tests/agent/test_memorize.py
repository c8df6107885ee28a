"""Long-term memory keeps findings only from a run that finished with an answer a verified citation backs.

A wrong answer stored by `remember` comes back as a "note from earlier research" in the next run, so a
run stopped by a budget or loop limit, or one whose answer no checked quote supports, stores nothing.
"""

from __future__ import annotations

from typing import ClassVar

from deepresearch.agent.graph.nodes.memorize import answer_is_verified
from deepresearch.agent.graph.run import ResearchRuntime, research
from deepresearch.agent.reader import NOT_FOUND
from deepresearch.tools.base import Tool
from pydantic import BaseModel

from .conftest import agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel


class _Note(BaseModel):
    text: str
    source: str = ""


class _Stored(BaseModel):
    stored: bool


class RecordingRemember(Tool[_Note, _Stored]):
    name: ClassVar[str] = "remember"
    description: ClassVar[str] = "keep a finding"
    input_model: ClassVar[type[BaseModel]] = _Note

    def __init__(self) -> None:
        self.notes: list[_Note] = []

    async def run(self, args: _Note) -> _Stored:
        self.notes.append(args)
        return _Stored(stored=True)


def with_memory(toolbox: DictToolbox) -> RecordingRemember:
    remember = RecordingRemember()
    toolbox.tools["remember"] = remember
    return remember


async def run(toolbox, store, settings=None):
    runtime = ResearchRuntime(ScriptedModel(default_script()), toolbox, store, settings or agent_settings())
    return await research("When was Ada Lovelace born?", runtime)


async def test_a_finished_run_with_a_verified_answer_is_remembered(toolbox, store):
    remember = with_memory(toolbox)
    result = await run(toolbox, store)
    assert result.status == "finished" and result.answer == "1815"
    verified = [c for c in result.citations if c["verified"]]
    assert [n.source for n in remember.notes] == [c["source"] for c in verified]
    assert "1815" in remember.notes[0].text


async def test_a_run_stopped_by_its_budget_is_not_remembered(toolbox, store):
    remember = with_memory(toolbox)
    result = await run(toolbox, store, settings=agent_settings(max_llm_tokens=100))
    assert result.status == "budget_stop"
    # The answer is verified: only the early stop keeps it out of memory.
    assert answer_is_verified(result.answer, result.citations)
    assert remember.notes == []
    assert not [e for e in store.events(result.run_id, "tool") if e.payload["tool"] == "remember"]


async def test_an_answer_without_a_verified_citation_is_not_remembered(toolbox, store):
    remember = with_memory(toolbox)
    # the key points cite verified findings; the answer is held back ("not found": no span is likely enough right)
    settings = agent_settings().model_copy(update={"min_answer_confidence": 1.0})
    result = await research("When was Ada Lovelace born?",
                            ResearchRuntime(ScriptedModel(default_script()), toolbox, store, settings))
    assert result.status == "finished" and result.answer == NOT_FOUND
    assert any(c["verified"] for c in result.citations)  # verified points are not enough
    assert remember.notes == []


def test_answer_is_verified_needs_a_verified_citation_of_the_answer_itself():
    cite = {"n": 1, "source": "s", "title": "", "doc_id": None, "quote": "q", "claim": "Charles  Babbage",
            "verified": True, "reason": ""}
    assert answer_is_verified("charles babbage", [cite])
    assert not answer_is_verified("charles babbage", [{**cite, "verified": False}])
    assert not answer_is_verified("Ada Lovelace", [cite])  # a verified citation of another point
    assert not answer_is_verified("", [{**cite, "claim": ""}])
