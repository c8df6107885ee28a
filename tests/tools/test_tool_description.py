"""How each tool describes itself to the agent: its argument from the agent's flat input, what the
executor is told a call returned, the sources it surfaced, and its notes for the planner."""

from __future__ import annotations

from deepresearch.tools.base import Surfaced
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.files import ReadFileTool
from deepresearch.tools.memory.tool import RecallTool, RememberTool
from deepresearch.tools.sandbox.tool import PythonTool
from deepresearch.tools.search.tool import SearchTool


def bare(cls):
    """The tool without its resources: describing itself needs none."""
    return cls.__new__(cls)


def test_arguments_come_from_the_flat_input():
    assert bare(SearchTool).args_from("ada") == {"query": "ada"}
    assert bare(BrowserTool).args_from("http://x") == {"url": "http://x"}
    assert bare(PythonTool).args_from("print(1)") == {"code": "print(1)"}
    assert bare(RecallTool).args_from("ada") == {"query": "ada"}
    assert bare(ReadFileTool).args_from("notes.md") == {"path": "notes.md"}


def test_the_planner_and_executors_are_offered_the_plannable_tools():
    assert [t.name for t in (SearchTool, BrowserTool, PythonTool, RememberTool, RecallTool, ReadFileTool)
            if t.plannable] == ["search", "open", "python", "recall"]
    assert [t.name for t in (SearchTool, RecallTool) if t.before_planning] == ["recall"]


def test_observations_and_sources():
    hits = {"hits": [{"title": "Ada", "url": "http://w/ada", "doc_id": "d1"}, {"title": "No url", "url": ""}]}
    search = bare(SearchTool)
    # plain text: the executor fences every observation (tests/agent/test_fencing.py)
    assert search.observe("ada", hits) == "search('ada') → 2 results\n  Ada — http://w/ada\n  No url — "
    assert search.observe("ada", {"hits": []}) == "search('ada') → 0 results"
    assert search.sources(hits) == [Surfaced(url="http://w/ada", title="Ada", doc_id="d1")]
    page = {"url": "http://w/a", "final_url": "http://w/b", "title": "B", "text": "Text.", "doc_id": None}
    assert bare(BrowserTool).sources(page) == [Surfaced(url="http://w/b", title="B", text="Text.")]
    assert bare(BrowserTool).sources({**page, "text": ""}) == []
    assert bare(BrowserTool).observe("http://w/a", page) == "open('http://w/a') →\nText."
    assert bare(ReadFileTool).sources({"path": "/f.md", "title": "f", "text": "T."}) == [
        Surfaced(url="/f.md", title="f", text="T.")]
    ran = bare(PythonTool).observe("print(4)", {"exit_code": 0, "stdout": "4\n"})
    assert ran == "python → exit 0, stdout:\n4\n"
    recalled = {"memories": [{"text": "Ada was born in 1815."}], "documents": [{"snippet": "My notes."}]}
    assert bare(RecallTool).notes(recalled) == ["Ada was born in 1815.", "My notes."]
    assert bare(RecallTool).sources(recalled) == []
