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
from deepresearch.train.base_model import BaseModelNotFound, resolve_base_model, served_model_root, weights_dir
from deepresearch.train.rounds.questions import SearchSource, TrainQuestion, questions_from_runs
from deepresearch.train.rounds.replay import ReplayToolboxes, replay_environment

from .searxng_double import searxng_double
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


def test_ask_records_an_offline_run_so_its_replays_stay_offline(tmp_path: Path):
    settings = load_settings(data_dir=tmp_path)
    runtime = AgentRuntime(settings=settings, store=None, model=None, toolbox=None, offline=True,  # type: ignore[arg-type]
                           index="mine")
    source = SearchSource.from_snapshot(runtime.snapshot())
    assert source is not None and source.offline and source.index == "mine"
    assert source.describe() == "the local index mine only (the runs were offline)"


def replayer(tools: ToolSettings, today: SearchSource | None = None) -> tuple[ReplayToolboxes, list[str]]:
    lines: list[str] = []
    prepared = IndexRegistry(tools)

    def prepare(name: str) -> None:
        prepared.open(name)  # raises IndexNotFound (a LookupError) like the app's ensure_index

    return ReplayToolboxes(tools, today or SearchSource(backends=["local"]), "mine", prepare, lines.append), lines


async def test_each_question_is_replayed_in_the_search_set_up_its_own_run_used(tmp_path: Path):
    """Web runs search the user's SearxNG (a loopback double here), then their chain; offline runs their index
    only, with the URLs their run saw; runs that recorded nothing use today's settings."""
    tools = ToolSettings(data_dir=tmp_path / "data")
    registry = IndexRegistry(tools)
    registry.open("mine", create=True).add([SourceDoc(id="m1", title="Looms", text="Jacquard built looms.")],
                                           source="test")
    registry.close()
    store = TraceStore(tmp_path / "traces.db")
    with searxng_double() as searxng:
        web = {"tools": {"search": {"backends": ["searxng", "local"], "searxng_url": searxng.url}},
               "run": {"offline": False, "index": "mine"}}
        offline = {"tools": {"search": {"backends": ["searxng", "ddg", "local"], "searxng_url": searxng.url}},
                   "run": {"offline": True, "index": "mine"}}
        logged(store, "Who designed the Analytical Engine?", web)
        logged(store, "Who built the loom?", offline)
        logged(store, "What is a loom?", {"agent": {}})
        logged(store, "Who designed the Difference Engine?", web)
        items = {q.question: q for q in questions_from_runs(store)}
        store.close()
        replay, lines = replayer(tools.model_copy(update={"search": tools.search.model_copy(update={"cache": False})}))
        replay.plan(list(items.values()))
        assert lines == [
            f"rollouts of 2 question(s) as their runs did: searxng ({searxng.url}) → local (mine)",
            # ties: the newest question's set-up first
            "rollouts of 1 question(s) with today's settings (their runs recorded none): local (mine)",
            "rollouts of 1 question(s) as their runs did: the local index mine only (the runs were offline)",
        ]
        assert replay.default == replay.source_for(items["Who designed the Analytical Engine?"])
        async with replay_environment(replay) as env:
            assert env.toolbox_for is not None
            on_web = env.toolbox_for(items["Who designed the Analytical Engine?"])
            assert on_web is env.toolbox is env.toolbox_for(items["Who designed the Difference Engine?"])
            found = await on_web.get("search").invoke({"query": "Analytical Engine"})
            assert found.ok and found.output["backend"] == "searxng", found.error
            assert searxng.queries == ["Analytical Engine"]
            assert env.doc_id_for(found.output["hits"][0]["url"]) is None  # the web has no corpus ids

            at_home = env.toolbox_for(items["Who built the loom?"])
            assert at_home.offline and at_home.get("search").backend_names == ["local"]
            found = await at_home.get("search").invoke({"query": "loom"})
            assert found.ok and found.output["backend"] == "local"
            assert [h["url"] for h in found.output["hits"]] == ["local://mine/m1"]
            assert env.doc_id_for("local://mine/m1") == "m1"
            assert searxng.queries == ["Analytical Engine"]  # the offline replay never reached SearxNG

            today = env.toolbox_for(items["What is a loom?"])
            assert not today.offline and today.get("search").backend_names == ["local"]
            assert "remember" in on_web.unavailable and "recall" in at_home.unavailable  # runs stay independent


async def test_a_set_up_that_cannot_run_today_is_said_and_a_missing_index_falls_back_in_a_watch(tmp_path: Path):
    tools = ToolSettings(data_dir=tmp_path / "data")
    IndexRegistry(tools).open("mine", create=True).add([SourceDoc(id="m1", title="T", text="Looms.")], source="t")
    replay, lines = replayer(tools)
    brave = TrainQuestion(id="b", question="Who?", search=SearchSource(backends=["brave", "ddg", "local"],
                                                                       index="mine"))
    replay.plan([brave])
    assert lines == ["rollouts of 1 question(s) as their runs did: brave → ddg → local (mine) (no API key in "
                     "today's settings, skipped: brave)"]
    with pytest.raises(LookupError, match="gone"):
        replay.plan([TrainQuestion(id="g", question="Where?", search=SearchSource(backends=["local"], index="gone"))])
    # --watch: a new question whose index is gone since is replayed with today's settings, not a crash
    gone = TrainQuestion(id="g", question="Where?", search=SearchSource(backends=["local"], index="gone"))
    try:
        toolbox = replay.toolbox_for(gone)
        assert toolbox is replay.toolbox(replay.today)
        assert lines[-1].startswith("cannot replay 'Where?' as its run searched (") and \
            lines[-1].endswith("): today's settings instead")
    finally:
        await replay.close()


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


def test_a_cached_hub_model_is_the_snapshot_the_server_downloaded_not_the_hubs_newest(tmp_path: Path, monkeypatch):
    """Online (compose's HF_HUB_OFFLINE=0), asking the Hub first would hand the trainer a newer revision than the
    server serves: the shared cache's snapshot wins, and the Hub (a recording loopback double) is not asked."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from huggingface_hub import constants

    asked: list[str] = []

    class Hub(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            asked.append(self.path)
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    commit = "a" * 40
    repo = tmp_path / "hub" / "models--org--tiny"
    save_tiny_llama(repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    hub = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    Thread(target=hub.serve_forever, daemon=True).start()
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{hub.server_address[1]}")
    try:
        assert weights_dir("org/tiny") == repo / "snapshots" / commit
        assert asked == []
        with pytest.raises(BaseModelNotFound, match="org/other not found on the Hugging Face Hub"):
            weights_dir("org/other")  # not cached: only then is the Hub asked
        assert asked
    finally:
        hub.shutdown()
        hub.server_close()
