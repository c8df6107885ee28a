"""The baselines' logic on the real local index, local web, search and open tools (scripted model)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from deepresearch.agent.config import AgentSettings, BudgetSettings
from deepresearch.agent.model.types import ChatRequest
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import load_questions
from deepresearch.evals.run.environment import eval_tool_settings, local_web_doc_id
from deepresearch.evals.run.results import make_result
from deepresearch.evals.run.systems import SystemContext, run_agent_loop, run_retrieve
from deepresearch.evals.run.tooling import EvalTools
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.config import ToolSettings
from deepresearch.tools.index.documents import SourceDoc
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.localweb.server import LocalWebServer
from deepresearch.tools.search.tool import SearchTool

from tests.evals.scripted_model import ScriptedModel

DOCS = [
    ("d1", "Paris", "Paris is the capital and largest city of France. It lies on the Seine."),
    ("d2", "Lyon", "Lyon is the third-largest city of France, at the confluence of the Rhone and the Saone."),
    ("d3", "Seine", "The Seine is a river in northern France that flows through Paris."),
    ("d4", "Berlin", "Berlin is the capital of Germany."),
]
QUESTION = "What is the capital of France?"


@pytest.fixture
async def world(tmp_path: Path):
    """Real index + local web + real search/open tools, as the eval environment builds them."""
    settings = ToolSettings(data_dir=tmp_path / "data")
    registry = IndexRegistry(settings)
    index = registry.open("evaltest", create=True)
    index.add([SourceDoc(id=i, title=t, text=x) for i, t, x in DOCS], source="test")
    texts = {i: x for i, _, x in DOCS}
    with LocalWebServer(index) as web:
        host = web.url.removeprefix("http://")
        search = SearchTool.from_settings(settings.search, local_indexes=[], searxng_url=web.url, offline=True)
        browser_settings = eval_tool_settings(settings, web.url).browser
        assert host in browser_settings.allow_hosts
        browser = BrowserTool(browser_settings, offline=True)
        tools = EvalTools(
            search_tool=search, open_tool=browser, doc_id_for=lambda url: local_web_doc_id(url, web.url),
            doc_text=texts.get,
        )
        store = TraceStore(tmp_path / "traces.db")
        yield tools, store, tmp_path
        store.close()
        await search.close()
        await browser.close()
    registry.close()


def _question(tmp_path: Path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": QUESTION, "answer": "Paris", "gold_doc_ids": ["d1"]}))
    return load_questions(path)[0]


def _source_of(request: ChatRequest, title: str) -> int:
    match = re.search(rf"\[(\d+)\] {title}\n", request.messages[-1].content)
    assert match, request.messages[-1].content
    return int(match.group(1))


def _ctx(world, model: ScriptedModel, **budget) -> SystemContext:
    tools, store, _ = world
    agent = AgentSettings(budget=BudgetSettings(**budget)) if budget else AgentSettings()
    return SystemContext(model=model, store=store, agent=agent, evals=EvalSettings(), eval_id="e1", tools=tools)


async def test_retrieve_cites_the_gold_passage(world) -> None:
    _, store, tmp_path = world

    def script(request: ChatRequest) -> dict:
        return {"answer": "Paris", "source": _source_of(request, "Paris")}

    model = ScriptedModel({QUESTION: ""}, script=script)
    question = _question(tmp_path)
    output = await run_retrieve(question, _ctx(world, model))
    assert output.error is None and output.answer == "Paris"
    assert output.tool_calls == 1 and output.llm_calls == 1
    assert "d1" in output.retrieved_doc_ids
    assert [c.doc_id for c in output.citations] == ["d1"] and output.citations[0].verified
    assert output.citations[0].quote.startswith("Paris is the capital")
    scores = make_result("e1", "retrieve", question, output).scores
    assert (scores.em, scores.citation_precision, scores.citation_recall) == (1.0, 1.0, 1.0)
    assert scores.verified_share == 1.0 and scores.found_in_evidence == 1.0
    # the schema only allows the numbers of shown sources
    schema = model.requests[0].json_schema
    assert schema["properties"]["source"]["enum"] == list(range(1, len(output.retrieved_doc_ids) + 1))
    kinds = [e.kind for e in store.events(output.run_id)]
    assert kinds[:2] == ["tool", "llm"] and store.get_run(output.run_id).tags["system"] == "retrieve"


async def test_retrieve_unverified_citation(world) -> None:
    _, _, tmp_path = world
    model = ScriptedModel({QUESTION: ""}, script=lambda r: {"answer": "Berlin", "source": _source_of(r, "Paris")})
    output = await run_retrieve(_question(tmp_path), _ctx(world, model))
    assert output.citations and not output.citations[0].verified  # d1 does not say Berlin


async def test_agent_loop_search_open_answer(world) -> None:
    _, store, tmp_path = world
    actions = iter([{"tool": "search", "query": "capital France"}, {"tool": "open", "query": "1"},
                    {"tool": "answer", "query": "Paris"}])

    def script(request: ChatRequest) -> dict:
        if "source" in request.json_schema["properties"]:
            return {"answer": "Paris", "source": _source_of(request, "Paris")}
        return next(actions)

    question = _question(tmp_path)
    output = await run_agent_loop(question, _ctx(world, ScriptedModel({QUESTION: ""}, script=script)))
    assert output.error is None and output.stop_reason == "finished"
    assert output.tool_calls == 2 and output.llm_calls == 4  # 3 actions + the answer call
    assert output.citations[0].doc_id == "d1" and output.citations[0].verified
    assert any("capital and largest city" in e for e in output.evidence)
    events = [e.payload for e in store.events(output.run_id, kind="tool")]
    assert [e["tool"] for e in events] == ["search", "open"]
    assert events[1]["error"] is None and events[1]["output"]["title"] == "Paris"
    assert make_result("e1", "agent-loop", question, output).scores.f1 == 1.0


async def test_agent_loop_stops_on_repeats_and_budget(world) -> None:
    _, _, tmp_path = world
    question = _question(tmp_path)

    def repeat(request: ChatRequest) -> dict:
        if "source" in request.json_schema["properties"]:
            return {"answer": "Paris", "source": 1}
        return {"tool": "search", "query": "capital France"}

    looped = await run_agent_loop(question, _ctx(world, ScriptedModel({QUESTION: ""}, script=repeat)))
    assert looped.stop_reason == "loop_stop" and looped.tool_calls == 1  # the repeat is refused, not run

    queries = iter(["France", "capital", "Seine", "city"])

    def wander(request: ChatRequest) -> dict:
        if "source" in request.json_schema["properties"]:
            return {"answer": "Paris", "source": 1}
        return {"tool": "search", "query": next(queries)}

    capped = await run_agent_loop(question, _ctx(world, ScriptedModel({QUESTION: ""}, script=wander),
                                                 max_tool_calls=2))
    assert capped.stop_reason == "budget_stop" and capped.tool_calls == 2


def test_local_web_doc_id() -> None:
    web = "http://127.0.0.1:8123"
    assert local_web_doc_id(f"{web}/doc/a%2Fb", web) == "a/b"
    assert local_web_doc_id("local://pool/abc", web) == "abc"
    assert local_web_doc_id("http://example.com/doc/abc", web) is None


async def test_eval_environment_indexes_serves_and_stops(tmp_path: Path) -> None:
    import httpx
    from deepresearch.evals.data.dataset import load_corpus
    from deepresearch.evals.run.environment import eval_environment, index_name_for

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS))
    docs = load_corpus(corpus)
    settings = ToolSettings(data_dir=tmp_path / "data")
    async with eval_environment(corpus, docs, settings) as tools:
        assert tools is not None
        assert set(tools.toolbox.names()) >= {"search", "open"}
        assert not {"remember", "recall"} & set(tools.toolbox.names())  # memory off: no leaks between questions
        outcome = await tools.search_tool.invoke({"query": "capital of France"})
        hits = outcome.output["hits"]
        assert hits[0]["doc_id"] == "d1" and hits[0]["url"].startswith("http://127.0.0.1:")
        assert tools.doc_id_for(hits[0]["url"]) == "d1" and tools.doc_text("d1") == DOCS[0][2]
        page = await tools.open_tool.invoke({"url": hits[0]["url"]})
        assert page.ok and "capital and largest city" in page.output["text"]
        web_url = hits[0]["url"]
    assert (settings.indexes_dir / index_name_for(corpus)).is_dir()
    with pytest.raises(httpx.ConnectError):  # the local web is stopped with the run
        httpx.get(web_url, timeout=2)
    async with eval_environment(None, None, settings) as nothing:
        assert nothing is None


async def test_eval_environment_takes_another_port_when_its_own_is_taken_before_it_binds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two evals started together both find the site's port free; the one that loses the bind goes on."""
    import socket

    from deepresearch.evals.data.dataset import load_corpus
    from deepresearch.evals.run.environment import eval_environment
    from deepresearch.tools.localweb import server

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS))
    with socket.socket() as other_eval:
        other_eval.bind(("127.0.0.1", 0))
        other_eval.listen()
        taken = other_eval.getsockname()[1]
        ports = iter([taken])
        real_site_port = server.site_port
        monkeypatch.setattr(server, "site_port", lambda name: next(ports, None) or real_site_port(name))
        async with eval_environment(corpus, load_corpus(corpus), ToolSettings(data_dir=tmp_path / "data")) as tools:
            assert tools is not None
            hits = (await tools.search_tool.invoke({"query": "capital of France"})).output["hits"]
            assert f":{taken}/" not in hits[0]["url"] and tools.doc_id_for(hits[0]["url"]) == "d1"
            page = await tools.open_tool.invoke({"url": hits[0]["url"]})
            assert page.ok and "capital and largest city" in page.output["text"]


async def test_eval_environment_serves_on_a_pinned_port_or_fails(tmp_path: Path) -> None:
    """A pinned port (bench/agent.py --port) is the port of every URL the agent reads; taken, it is an error."""
    import socket

    from deepresearch.evals.data.dataset import load_corpus
    from deepresearch.evals.run.environment import eval_environment

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS))
    settings = ToolSettings(data_dir=tmp_path / "data")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    async with eval_environment(corpus, load_corpus(corpus), settings, port=free) as tools:
        assert tools is not None
        hits = (await tools.search_tool.invoke({"query": "capital of France"})).output["hits"]
        assert hits[0]["url"].startswith(f"http://127.0.0.1:{free}/")
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        taken = other.getsockname()[1]
        with pytest.raises(OSError, match=f"pinned port {taken}"):
            async with eval_environment(corpus, load_corpus(corpus), settings, port=taken):
                pass
