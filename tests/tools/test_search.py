"""The search tool: fallback chain over real HTTP backends, normalisation, cache, pacing, offline."""

from __future__ import annotations

import json
import time

import pytest
from deepresearch.tools.index.build import index_paths
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.search.normalise import normalise_url
from deepresearch.tools.toolbox import build_toolbox

from . import servers


def _searx_results(handler: servers.ScriptedHandler) -> None:
    rows = [
        {"url": "https://example.org/a?utm_source=x", "title": "A", "content": "first"},
        {"url": "https://EXAMPLE.org/a/", "title": "A again", "content": "duplicate"},
        {"url": "https://example.org/b#top", "title": "B", "content": "second"},
        {"url": "", "title": "no url", "content": "dropped"},
    ]
    handler.send(200, json.dumps({"query": "q", "results": rows}).encode(), "application/json")


def _rate_limited_once(handler: servers.ScriptedHandler) -> None:
    if handler.server.hits["/search"] == 1:
        handler.send(429, b"slow down", "text/plain", headers={"Retry-After": "1"})
    else:
        _searx_results(handler)


def _slow(handler: servers.ScriptedHandler) -> None:
    time.sleep(1.5)
    _searx_results(handler)


def _tavily(handler: servers.ScriptedHandler) -> None:
    if handler.headers.get("Authorization") != "Bearer tv-key":
        handler.send(401, b"{}", "application/json")
        return
    query = json.loads(handler.body)["query"]
    body = {"results": [{"title": f"T {query}", "url": "https://t.example/1", "content": "from tavily"}]}
    handler.send(200, json.dumps(body).encode(), "application/json")


def _brave(handler: servers.ScriptedHandler) -> None:
    assert handler.headers.get("X-Subscription-Token") == "br-key"
    body = {"web": {"results": [{"title": "B", "url": "https://b.example/1", "description": "from brave"}]}}
    handler.send(200, json.dumps(body).encode(), "application/json")


@pytest.fixture
def scripted():
    started: list = []

    def make(routes):
        server = servers.ScriptedServer(routes)
        started.append((server, servers.start(server)))
        return server

    yield make
    for server, thread in started:
        servers.stop(server, thread)


@pytest.fixture
def with_local(settings, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "doc1", "title": "Seals", "text": "Harbour seals rest on sandbars."}))
    registry = IndexRegistry(settings)
    index_paths(registry, "local1", [corpus])
    registry.close()
    return settings


async def test_rate_limited_backend_falls_back_then_recovers(with_local, scripted):
    server = scripted({"/search": _rate_limited_once})
    settings = with_local
    settings.search.backends = ["searxng", "local"]
    toolbox = build_toolbox(settings, searxng_url=server.base)

    first = await toolbox.invoke("search", {"query": "harbour seals"})
    assert first.ok and first.output["backend"] == "local"
    attempts = first.output["attempts"]
    assert attempts[0]["backend"] == "searxng" and attempts[0]["error_kind"] == "rate_limited"
    assert first.output["hits"][0]["url"] == "local://local1/doc1" and first.output["hits"][0]["doc_id"] == "doc1"

    second = await toolbox.invoke("search", {"query": "harbour seals"})  # within Retry-After: not even asked
    assert second.output["attempts"][0]["status"] == "skipped"
    assert second.output["attempts"][0]["error_kind"] == "cooling_down"
    assert server.hits["/search"] == 1

    time.sleep(1.1)
    third = await toolbox.invoke("search", {"query": "harbour seals"})
    assert third.output["backend"] == "searxng" and third.output["attempts"][0]["status"] == "ok"
    await toolbox.close()


async def test_hits_are_normalised_and_deduplicated(settings, scripted):
    server = scripted({"/search": _searx_results})
    settings.search.backends = ["searxng"]
    toolbox = build_toolbox(settings, searxng_url=server.base)
    out = await toolbox.invoke("search", {"query": "anything"})
    hits = out.output["hits"]
    assert [h["title"] for h in hits] == ["A", "B"]
    assert [h["rank"] for h in hits] == [1, 2] and {h["backend"] for h in hits} == {"searxng"}
    assert normalise_url("HTTP://Example.org:80/a/?utm_medium=m&x=1#f") == "http://example.org/a?x=1"
    await toolbox.close()


async def test_timeout_and_dead_backend_fall_through(with_local, scripted):
    slow = scripted({"/search": _slow})
    settings = with_local
    settings.search.timeout_s = 0.5
    settings.search.backends = ["searxng", "local"]
    toolbox = build_toolbox(settings, searxng_url=slow.base)
    out = await toolbox.invoke("search", {"query": "seals"})
    assert out.output["attempts"][0]["error_kind"] == "timeout" and out.output["backend"] == "local"
    await toolbox.close()

    dead = build_toolbox(settings, searxng_url="http://127.0.0.1:9")  # nothing listens on the discard port
    out = await dead.invoke("search", {"query": "seals"})
    assert out.output["attempts"][0]["error_kind"] == "network" and out.output["backend"] == "local"
    await dead.close()


async def test_every_backend_failing_is_a_clear_error(settings, scripted):
    settings.search.backends = ["searxng"]
    toolbox = build_toolbox(settings, searxng_url="http://127.0.0.1:9")
    out = await toolbox.invoke("search", {"query": "x"})
    assert out.error_kind == "search_failed" and "searxng: network" in out.error
    await toolbox.close()


async def test_disk_cache_answers_repeat_queries(settings, scripted, tmp_path):
    server = scripted({"/search": _searx_results})
    settings.search.cache = True
    settings.search.backends = ["searxng"]
    toolbox = build_toolbox(settings, searxng_url=server.base)
    await toolbox.invoke("search", {"query": "Same  Query"})
    await toolbox.close()
    again = build_toolbox(settings, searxng_url=server.base)  # the cache is on disk
    out = await again.invoke("search", {"query": "same query"})
    assert out.output["attempts"][0]["cached"] is True and server.hits["/search"] == 1
    await again.close()


async def test_per_backend_rate_limit_spaces_requests(settings, scripted):
    server = scripted({"/search": _searx_results})
    settings.search.backends = ["searxng"]
    settings.search.min_interval_s = {"searxng": 0.4}
    toolbox = build_toolbox(settings, searxng_url=server.base)
    start = time.perf_counter()
    for query in ("one", "two", "three"):
        assert (await toolbox.invoke("search", {"query": query})).ok
    assert time.perf_counter() - start >= 0.8
    await toolbox.close()


async def test_keyed_backends_speak_tavily_and_brave(settings, scripted):
    server = scripted({"/tavily": _tavily, "/brave": _brave})
    settings.search.backends = ["tavily", "brave"]
    settings.search.tavily_url = server.base + "/tavily"
    settings.search.brave_url = server.base + "/brave"
    settings.search.brave_api_key = "br-key"
    settings.search.tavily_api_key = "wrong"
    toolbox = build_toolbox(settings)
    out = await toolbox.invoke("search", {"query": "moths"})
    assert out.output["attempts"][0]["error_kind"] == "http_error"  # Tavily refused the key: on to Brave
    assert out.output["hits"][0]["snippet"] == "from brave" and out.output["backend"] == "brave"
    await toolbox.close()

    settings.search.tavily_api_key = "tv-key"
    toolbox = build_toolbox(settings)
    out = await toolbox.invoke("search", {"query": "moths"})
    assert out.output["hits"][0]["title"] == "T moths" and out.output["backend"] == "tavily"
    await toolbox.close()


async def test_offline_uses_only_local_backends(with_local):
    settings = with_local
    settings.search.backends = ["searxng", "ddg", "tavily", "brave", "local"]
    settings.search.searxng_url = "https://searx.example"
    settings.search.brave_api_key = "k"
    online = build_toolbox(settings)
    assert online.get("search").backend_names == ["searxng", "ddg", "brave", "local"]
    await online.close()
    offline = build_toolbox(settings, offline=True)
    assert offline.get("search").backend_names == ["local"]
    out = await offline.invoke("search", {"query": "sandbars"})
    assert out.output["hits"][0]["doc_id"] == "doc1"
    await offline.close()


async def test_ddg_without_internet_fails_over(with_local):
    settings = with_local
    settings.search.backends = ["ddg", "local"]
    settings.search.timeout_s = 3
    toolbox = build_toolbox(settings)
    out = await toolbox.invoke("search", {"query": "harbour seals"})
    assert out.ok and out.output["backend"] == "local"
    assert out.output["attempts"][0]["backend"] == "ddg" and out.output["attempts"][0]["status"] == "error"
    await toolbox.close()


async def test_bad_search_input_and_no_backend(settings):
    settings.search.backends = ["searxng"]
    toolbox = build_toolbox(settings)
    assert "search" not in toolbox.names() and "searxng" in toolbox.unavailable["search"].lower()
    out = await toolbox.invoke("search", {"query": "x"})
    assert out.error_kind == "unavailable"
    await toolbox.close()
    settings.search.backends = ["local"]
    for bad in ({}, {"query": ""}, {"query": 3}, {"query": "x" * 600}):
        toolbox = build_toolbox(settings)
        toolbox.unavailable.pop("search", None)
        out = await toolbox.invoke("search", bad)
        assert out.error_kind == "bad_args", bad
        await toolbox.close()
