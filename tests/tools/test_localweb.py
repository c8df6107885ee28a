"""The local web over the pool corpus: SearxNG JSON, one page per document, real search + browser path."""

from __future__ import annotations

import json
import socket

import httpx
from deepresearch.tools.index.build import index_paths
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.localweb.server import LocalWebServer
from deepresearch.tools.toolbox import build_toolbox

from .conftest import POOL_QUESTIONS


def _question() -> dict:
    return next(q for q in map(json.loads, POOL_QUESTIONS.open()) if q["split"] == "dev")


def test_searxng_json_and_document_pages(pool_index):
    question = _question()
    with LocalWebServer(pool_index) as web:
        body = httpx.get(f"{web.url}/search", params={"q": question["question"], "format": "json"}).json()
        results = body["results"]
        assert body["query"] == question["question"] and len(results) == 10
        assert {"url", "title", "content", "engine"} <= set(results[0])
        assert results[0]["url"] == f"{web.url}/doc/{results[0]['doc_id']}"
        page2 = httpx.get(f"{web.url}/search", params={"q": question["question"], "format": "json", "pageno": 2})
        assert {r["doc_id"] for r in page2.json()["results"]}.isdisjoint(r["doc_id"] for r in results)

        gold = pool_index.get(question["gold_doc_ids"][0])
        page = httpx.get(f"{web.url}/doc/{gold.id}")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert f"<title>{gold.title}" in page.text.replace("&#x27;", "'").replace("&amp;", "&")
        assert httpx.get(f"{web.url}/doc/no-such-doc").status_code == 404
        assert httpx.get(f"{web.url}/search", params={"q": "harbour"}).headers["content-type"].startswith("text/html")
        assert httpx.get(f"{web.url}/robots.txt").text.startswith("User-agent: *")
        port = web.port
    with socket.socket() as probe:  # stopped means the port is free again
        probe.bind(("127.0.0.1", port))


async def test_real_search_and_browser_path_over_the_local_web(pool_settings, pool_index):
    question = _question()
    with LocalWebServer(pool_index) as web:
        pool_settings_web = pool_settings.model_copy(deep=True)
        pool_settings_web.search.backends = ["searxng"]
        # offline: no internet backends, yet the explicitly given local web is searched and browsed
        toolbox = build_toolbox(pool_settings_web, searxng_url=web.url, index="pool", offline=True)
        found = await toolbox.invoke("search", {"query": question["question"]})
        assert found.ok and found.output["backend"] == "searxng"
        hit = found.output["hits"][0]
        assert hit["url"].startswith(web.url + "/doc/") and hit["doc_id"]

        opened = await toolbox.invoke("open", {"url": hit["url"]})
        assert opened.ok, opened.error
        doc = pool_index.get(hit["doc_id"])
        assert opened.output["method"] == "httpx" and opened.output["title"] == doc.title
        assert doc.text[:80] in opened.output["text"]
        # the reader and the citation checker read a local-web page as the index holds it (as a local:// one),
        # opened or not: the page's text has lost the blank lines between the document's paragraphs
        assert toolbox.source_text(hit["url"]) == doc.text
        other = found.output["hits"][1]
        assert toolbox.source_text(other["url"]) == pool_index.get(other["doc_id"]).text
        await toolbox.close()


async def test_offline_local_urls_need_no_server(pool_settings):
    toolbox = build_toolbox(pool_settings, offline=True, index="pool")
    found = await toolbox.invoke("search", {"query": "Socialist Revolutionary Party Kerensky"})
    hit = found.output["hits"][0]
    assert hit["url"].startswith("local://pool/")
    opened = await toolbox.invoke("open", {"url": hit["url"]})
    assert opened.ok and opened.output["method"] == "local" and opened.output["doc_id"] == hit["doc_id"]
    assert toolbox.source_text(hit["doc_id"]) == opened.output["text"] == toolbox.source_text(hit["url"])
    missing = await toolbox.invoke("open", {"url": "local://pool/not-a-doc"})
    assert missing.error_kind == "not_found"
    web = await toolbox.invoke("open", {"url": "https://example.org/"})
    assert web.error_kind == "offline"
    await toolbox.close()


NOTE = ("Harbour Rowing Club\n===================\n\nMinutes, Tuesday 4 June 2024, boathouse\n\n"
        "Present: Ann Lee (Chair), Bo Park (Treasurer),\nCal Moss (Captain).\n\n"
        "The new trailer costs £2,400 and arrives in July.\n")


async def test_a_local_web_note_is_read_with_its_paragraphs(tmp_path):
    """A note served by the local web is read as the product reads it from its index (`ask --index`): the title,
    its underline and the fields under it are units apart, not one run of text the page's lines make."""
    from deepresearch.agent.graph.reading import read_sentences

    from .conftest import fresh_settings

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "minutes.md").write_text(NOTE)
    settings = fresh_settings(tmp_path / "data")
    registry = IndexRegistry(settings)
    try:
        index_paths(registry, "notes", [tmp_path / "docs"])
        with LocalWebServer(registry.open("notes")) as web:
            settings.search.backends = ["searxng"]
            toolbox = build_toolbox(settings, searxng_url=web.url, index="notes", offline=True)
            found = await toolbox.invoke("search", {"query": "trailer cost rowing club"})
            hit = found.output["hits"][0]
            opened = await toolbox.invoke("open", {"url": hit["url"]})
            assert opened.ok and "\n\n" not in opened.output["text"]  # the page's text: one paragraph a line
            assert toolbox.source_text(hit["url"]) == NOTE
            units = [s.text for s in read_sentences(
                [{"url": hit["url"], "title": hit["title"], "rank": 0, "hop": False, "step_id": "s1"}],
                toolbox.source_text)]
            assert "Present: Ann Lee (Chair), Bo Park (Treasurer), Cal Moss (Captain)." in units
            assert not any("Minutes" in u and "Present" in u for u in units)
            await toolbox.close()
    finally:
        registry.close()
