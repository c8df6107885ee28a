"""`train --from-runs` on a model server: logged questions replayed where their runs searched, the gate's
default dev set, and the base model taken from what the server serves."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.runtime import AgentRuntime
from deepresearch.app.settings import load_settings
from deepresearch.tools.config import ToolSettings
from deepresearch.tools.index.documents import SourceDoc
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.localweb.server import LocalWebServer
from deepresearch.train.base_model import BaseModelNotFound, resolve_base_model, served_model_root, weights_dir
from deepresearch.train.environment import rollout_environment
from deepresearch.train.questions import SearchSource, common_search_source, questions_from_runs

from .tiny_model import save_tiny_llama

MASK = "**********"
WEB_RUN = {
    "index": "demo",
    "tools": {"search": {"backends": ["searxng", "ddg", "tavily", "brave", "local"],
                         "searxng_url": "http://searxng:8080", "tavily_api_key": None, "brave_api_key": MASK}},
    "run": {"offline": False, "index": "mine"},
}


def logged(store: TraceStore, question: str, snapshot: dict) -> str:
    run_id = store.start_run(question, snapshot)
    store.finish_run(run_id, "finished", "an answer", "a report", [], {})
    time.sleep(0.01)  # runs are listed newest first by creation time
    return run_id


def test_logged_questions_carry_where_their_newest_run_searched(tmp_path: Path):
    store = TraceStore(tmp_path / "traces.db")
    logged(store, "Who built it?", {"agent": {}})  # an older run that recorded no search settings
    logged(store, "Who built it?", WEB_RUN)
    logged(store, "When was it built?", {"agent": {}})
    items = {q.question: q for q in questions_from_runs(store)}
    store.close()
    searched = items["Who built it?"].search
    # backends that were not configured (tavily without a key) did not take part in the run
    assert searched == SearchSource(offline=False, index="mine", backends=["searxng", "ddg", "brave", "local"],
                                    searxng_url="http://searxng:8080")
    assert searched.describe() == "searxng (http://searxng:8080) → ddg → brave → local (mine)"
    assert items["When was it built?"].search is None
    assert common_search_source(list(items.values())) == searched


def test_ask_records_an_offline_run_so_its_replays_stay_offline(tmp_path: Path):
    settings = load_settings(data_dir=tmp_path)
    runtime = AgentRuntime(settings=settings, store=None, model=None, toolbox=None, offline=True,  # type: ignore[arg-type]
                           index="mine")
    source = SearchSource.from_snapshot(runtime.snapshot())
    assert source is not None and source.offline and source.index == "mine"
    assert source.describe() == "the local index mine only (the runs were offline)"


def test_the_most_common_search_set_up_wins():
    a, b = SearchSource(backends=["ddg"]), SearchSource(backends=["local"], offline=True)
    from deepresearch.train.questions import TrainQuestion

    items = [TrainQuestion(id=str(i), question=f"q{i}", search=s) for i, s in enumerate([b, a, a, None])]
    assert common_search_source(items) == a
    assert common_search_source([TrainQuestion(id="x", question="q")]) is None


async def test_the_web_environment_searches_the_configured_backends(tmp_path: Path):
    """A SearxNG-compatible site stands in for the user's SearxNG: replays search it, then the local index."""
    tools = ToolSettings(data_dir=tmp_path / "data")
    registry = IndexRegistry(tools)
    site = registry.open("site", create=True)
    site.add([SourceDoc(id="d1", title="Analytical Engine", text="Charles Babbage designed the Analytical Engine.")],
             source="test")
    registry.open("mine", create=True).add([SourceDoc(id="m1", title="Notes", text="My notes on looms.")],
                                           source="test")
    with LocalWebServer(site) as searxng:
        search = tools.search.model_copy(update={"backends": ["searxng", "local"], "searxng_url": searxng.url,
                                                 "cache": False})
        web_tools = tools.model_copy(update={"search": search})
        async with rollout_environment(web_tools, index="mine", web=True) as env:
            tool = env.toolbox.get("search")
            assert tool.backend_names == ["searxng", "local"]
            outcome = await tool.invoke({"query": "Analytical Engine"})
            assert outcome.ok, outcome.error
            assert outcome.output["backend"] == "searxng"
            assert [h["url"] for h in outcome.output["hits"]] == [f"{searxng.url}/doc/d1"]
            assert env.doc_id_for("local://mine/m1") == "m1" and env.doc_id_for(f"{searxng.url}/doc/d1") is None
    registry.close()
    with pytest.raises(ValueError):
        async with rollout_environment(web_tools, corpus=tmp_path / "c.jsonl", web=True):
            pass


# --- the base model behind the server ----------------------------------------------------------------------
def vllm_models(*cards: dict) -> httpx.Client:
    """A client whose server answers /v1/models like vLLM: base models have `root`, adapters a `parent`."""
    return httpx.Client(transport=httpx.MockTransport(
        lambda request: httpx.Response(200, json={"object": "list", "data": list(cards)})))


def test_the_served_base_models_root_is_found_and_adapters_are_skipped():
    cards = ({"id": "grpo-r0001", "root": "/data/adapters/grpo-r0001", "parent": "qwen"},
             {"id": "qwen", "root": "/models/Qwen3-8B"})
    assert served_model_root("http://model:8000/v1", "qwen", client=vllm_models(*cards)) == "/models/Qwen3-8B"
    # another served name: still the only base model
    assert served_model_root("http://model:8000/v1", "other", client=vllm_models(*cards)) == "/models/Qwen3-8B"
    not_vllm = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"data": [{"id": "x"}]})))
    assert served_model_root("http://x/v1", "x", client=not_vllm) is None
    assert served_model_root("http://127.0.0.1:9/v1", "x", timeout_s=2) is None  # nothing listens


def test_weights_come_from_a_model_directory_or_the_hugging_face_cache(tmp_path: Path, monkeypatch):
    model = save_tiny_llama(tmp_path / "tiny")
    assert weights_dir(str(model)) == model
    with pytest.raises(BaseModelNotFound, match="no config.json"):
        weights_dir(str(tmp_path))
    with pytest.raises(BaseModelNotFound, match="not a directory here"):
        weights_dir("/models/missing")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(BaseModelNotFound, match="Hugging Face cache"):
        weights_dir("Qwen/Qwen3-8B")


def test_the_servers_answer_wins_over_model_and_model_is_the_fallback(tmp_path: Path, monkeypatch):
    served, other = save_tiny_llama(tmp_path / "served"), save_tiny_llama(tmp_path / "other")
    monkeypatch.setenv("MODEL", str(other))
    client = vllm_models({"id": "m", "root": str(served)})
    assert resolve_base_model("http://model:8000/v1", "m", client=client) == (served, f"{served}, served by "
                                                                                     "http://model:8000/v1")
    down = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(503)))
    path, how = resolve_base_model("http://model:8000/v1", "m", client=down)
    assert path == other and how.endswith("from $MODEL")
    monkeypatch.delenv("MODEL")
    with pytest.raises(BaseModelNotFound, match=r"names no base model 'm'; \$MODEL is not set"):
        resolve_base_model("http://model:8000/v1", "m", client=down)
