"""The TUI driven headless: ask, watch the report arrive, rate it; bad input is refused clearly."""

from __future__ import annotations

from contextlib import asynccontextmanager

from deepresearch.app.runtime import AgentRuntime
from deepresearch.app.settings import load_settings
from deepresearch.app.tui.app import ResearchApp
from textual.widgets import DataTable, Markdown, RichLog

from .conftest import DOCS, default_script
from .fakes import DictToolbox, ScriptedModel


def make_app(tmp_path, store):
    settings = load_settings(data_dir=tmp_path)

    @asynccontextmanager
    async def runtime():
        yield AgentRuntime(settings=settings, store=store, model=ScriptedModel(default_script()),
                           toolbox=DictToolbox(DOCS))

    return ResearchApp(runtime)


def log_text(app) -> str:
    return "\n".join(str(line.text) for line in app.query_one("#log", RichLog).lines)


async def test_ask_rate_and_list_runs(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.click("#question")
        await pilot.press(*"When was Ada Lovelace born?", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "1815" in app.query_one("#report", Markdown).source
        assert "verified citation" in log_text(app)
        await pilot.press("tab")  # leave the input so + rates instead of typing
        await pilot.press("plus")
        run = store.list_runs()[0]
        assert run.feedback and run.feedback[0]["score"] == 1.0
        assert app.query_one("#runs", DataTable).row_count == 1


async def test_empty_question_is_refused(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.click("#question")
        await pilot.press("enter")
        await pilot.pause()
        assert "type a question first" in log_text(app)
        assert store.list_runs() == []
