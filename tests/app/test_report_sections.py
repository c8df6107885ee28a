"""An open question's written report, by a scripted model that writes (tests/agent/report_script.py), as every
reader gets it: the markdown, the HTML and PDF export, `ask --json`, the HTTP API and the MCP tools. The model
writes supported sentences and one per section that no quote supports: only the supported ones are shown as
supported (with their citations); the others are removed, counted, and listed with the reason."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.commands.ask import result_json
from deepresearch.app.report_export import render_report
from deepresearch.app.report_html import render_html
from deepresearch.app.report_view import view_of_run
from deepresearch.app.service.api import create_app
from deepresearch.app.service.manager import RunManager
from deepresearch.app.service.mcp_server import build_server
from deepresearch.app.settings import Settings
from fastapi.testclient import TestClient
from mcp import Client

from ..agent.fakes import DictToolbox
from ..agent.report_script import DOCS, INVENTED, OPEN_QUESTION, capable_model

REASON = "its quotes do not support it (Ada, Lovelace, 1843 not in them)"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache")


@pytest.fixture
def stored(settings: Settings) -> Any:
    """The written report of the open question, run by the real graph and kept in the data dir's trace store."""
    settings.paths.data_dir.mkdir(parents=True)
    store = TraceStore(settings.paths.traces_db)
    try:
        runtime = ResearchRuntime(capable_model(), DictToolbox(dict(DOCS)), store, settings.agent)
        yield asyncio.run(research(OPEN_QUESTION, runtime, options=RunOptions()))
    finally:
        store.close()


def assert_checked(parts: dict[str, Any]) -> None:
    """The report's structure as JSON (the view, `--json`, the API, MCP): supported sentences with their citations,
    the invented ones (one per section) removed with the reason."""
    invented = len(parts["sections"])  # two over the test's pages; over the demo index, one per page quoted
    assert parts["style"] == "written" and invented >= 2 and parts["dropped"] == invented
    sentences = [s for section in parts["sections"] for s in section["sentences"]]
    assert sentences and all(s["supported"] and s["cites"] and s["text"] != INVENTED for s in sentences)
    assert [(s["text"], s["supported"], s["reason"]) for s in parts["dropped_sentences"]] == [
        (INVENTED, False, REASON)] * invented


def test_markdown_html_pdf_and_json_show_only_supported_sentences_as_supported(settings, stored):
    body, removed = stored.report.split("## Removed by the check")
    assert INVENTED not in body and removed.count(INVENTED) == 2
    shown = [line for line in body.splitlines() if line.startswith("In short")]
    assert len(shown) == 2 and all(re.search(r" \[\d+\]$", line) for line in shown)

    store = TraceStore(settings.paths.traces_db)
    try:
        view = view_of_run(store.get_run(stored.run_id))
    finally:
        store.close()
    assert_checked(view.model_dump(mode="json"))
    assert [s.cites for section in view.sections for s in section.sentences] == [[1], [2]]
    assert {s.n for s in view.sources} == {1, 2}

    html = render_html(view)
    supported_part, removed_part = html.split("<h2>Removed by the check</h2>")
    assert INVENTED not in supported_part and "2 sentence(s) removed by the check" in supported_part
    assert removed_part.count(f'<li class="removed">{INVENTED} <em>(unsupported: {REASON})</em></li>') == 2
    assert '<a class="cite" href="#src-1">[1]</a>' in supported_part and "<h2>Answer</h2>" not in html
    assert render_report(view, "pdf", settings.tools.browser).startswith(b"%PDF-")  # printed by Chromium

    as_json = result_json(stored, None)
    assert_checked(as_json)
    assert as_json["verified_citations"] == 2 and as_json["removed_citations"] == 2


def test_a_written_report_with_nothing_left_falls_back_to_quotes_in_the_view_and_html(settings):
    """The model writes only sentences its quotes do not support: the report is the extractive one, and the view,
    `--json` and the HTML say it is quotes, and why."""
    settings.paths.data_dir.mkdir(parents=True)
    store = TraceStore(settings.paths.traces_db)
    try:
        runtime = ResearchRuntime(capable_model(faithful_too=False), DictToolbox(dict(DOCS)), store, settings.agent)
        result = asyncio.run(research(OPEN_QUESTION, runtime, options=RunOptions()))
        view = view_of_run(store.get_run(result.run_id))
    finally:
        store.close()
    why = "The check removed every sentence the model wrote (2)"
    assert view.style == "extractive" and view.fallback == why
    quotes = [s for section in view.sections for s in section.sentences]
    assert len(quotes) >= 2 and all(s.supported and s.cites for s in quotes)
    assert any(s.text.startswith("The Analytical Engine was a proposed") for s in quotes)
    assert INVENTED not in view.markdown and not view.dropped_sentences
    assert result_json(result, None)["style"] == "extractive"
    html = render_html(view)
    assert f'<p class="intro">{why}, so here are quotes from the sources read instead' in html
    assert "<li>The Analytical Engine was a proposed" in html and INVENTED not in html


def test_the_http_api_serves_the_sections_of_a_run_it_made(settings):
    manager = RunManager(settings, model=capable_model())
    # a loopback Host, as the API admits only requests that name this machine (app/service/admission.py)
    with TestClient(create_app(settings, manager=manager), base_url="http://127.0.0.1") as client:
        run_id = client.post("/runs", json={"question": "Compare The Jetsons and The Flintstones",
                                            "offline": True}).json()["id"]
        for _ in range(600):
            if client.get(f"/runs/{run_id}").json()["status"] not in ("queued", "running"):
                break
            time.sleep(0.05)
        report = client.get(f"/runs/{run_id}/report", params={"format": "json"})
        assert report.status_code == 200, report.text
        assert_checked(report.json())
        html = client.get(f"/runs/{run_id}/report", params={"format": "html"}).text
        assert INVENTED not in html.split("<h2>Removed by the check</h2>")[0]
        md = client.get(f"/runs/{run_id}/report").text
        assert md.startswith("# Compare The Jetsons and The Flintstones") and "## Removed by the check" in md


async def test_the_mcp_tools_give_each_sentence_and_its_check(settings, stored):
    async with Client(build_server(settings, manager=RunManager(settings, model=capable_model()))) as client:
        result = await client.call_tool("research", {"question": "Compare The Jetsons and The Flintstones",
                                                     "offline": True})
        assert not result.is_error
        assert_checked(result.structured_content)  # the research tool's result, over the demo index
        for run_id in (result.structured_content["run_id"], stored.run_id):
            got = await client.call_tool("get_report", {"run_id": run_id, "format": "json"})
            assert_checked(json.loads(got.content[0].text))
