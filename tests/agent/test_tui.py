"""The TUI driven headless: ask, watch the report arrive, rate it from anywhere; bad input is refused clearly."""

from __future__ import annotations

from contextlib import asynccontextmanager

from deepresearch.app.runtime import AgentRuntime
from deepresearch.app.settings import load_settings
from deepresearch.app.tui.app import ResearchApp
from textual.widgets import DataTable, Input, Markdown, RichLog
from textual.widgets._markdown import MarkdownBlockQuote, MarkdownBullet, MarkdownBulletList, MarkdownH2

from .conftest import DOCS, default_script
from .fakes import DictToolbox, ScriptedModel


def make_app(tmp_path, store, model=None, toolbox=None):
    settings = load_settings(data_dir=tmp_path)

    @asynccontextmanager
    async def runtime():
        yield AgentRuntime(settings=settings, store=store, model=model or ScriptedModel(default_script()),
                           toolbox=toolbox or DictToolbox(DOCS))

    return ResearchApp(runtime)


def log_text(app) -> str:
    """The log's text with whitespace collapsed: the log wraps long lines at the pane's width."""
    return " ".join(" ".join(str(line.text) for line in app.query_one("#log", RichLog).lines).split())


async def ask(app, pilot, question: str = "When was Ada Lovelace born?") -> None:
    await app.workers.wait_for_complete()  # the runtime is up
    await pilot.click("#question")
    await pilot.press(*question, "enter")


async def test_ask_rate_from_report_pane_and_list_runs(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "1815" in app.query_one("#report", Markdown).source
        assert "verified citation" in log_text(app)
        # The finished report takes focus, so + rates at once instead of typing into the question box.
        assert app.focused is app.query_one("#report-pane")
        await pilot.press("plus")
        run = store.list_runs()[0]
        assert [f["score"] for f in run.feedback] == [1.0]
        await pilot.press("minus")
        assert [f["score"] for f in store.get_run(run.id).feedback] == [1.0, -1.0]
        table = app.query_one("#runs", DataTable)
        assert table.row_count == 1 and "(-1)" in str(table.get_row(run.id)[0])
        assert app.query_one("#question", Input).value == ""


async def test_plus_types_in_the_question_box_and_ctrl_keys_rate_from_anywhere(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+n", "plus")  # in the question box "+" is a character, not a rating
        assert app.query_one("#question", Input).value == "+"
        run_id = store.list_runs()[0].id
        assert store.get_run(run_id).feedback == []
        await pilot.press("ctrl+g")
        await pilot.press("ctrl+f")
        assert [f["score"] for f in store.get_run(run_id).feedback] == [1.0, -1.0]
        assert app.focused is app.query_one("#question", Input)


async def test_sources_render_as_a_list(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(app, pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        # one source per number: two points verified against the same quote share it
        sources = list({c["n"]: c for c in store.list_runs()[0].citations if c.get("verified")}.values())
        assert sources
        blocks = list(app.query_one("#report", Markdown).children)
        heading = next(i for i, b in enumerate(blocks) if isinstance(b, MarkdownH2))
        assert "Sources" in str(blocks[heading].source)
        listed = blocks[heading + 1]  # one bullet per source, each with its quote beneath: not one paragraph
        assert isinstance(listed, MarkdownBulletList)
        assert len(listed.query(MarkdownBullet)) == len(sources) == len(listed.query(MarkdownBlockQuote))
        text = app.query_one("#report", Markdown).source
        for c in sources:
            assert f"**[{c['n']}]** {c['title']} — {c['source']}\n  > {c['quote']}" in text


async def test_empty_question_is_refused(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.click("#question")
        await pilot.press("enter")
        await pilot.pause()
        assert "type a question first" in log_text(app)
        assert store.list_runs() == []


async def test_rating_with_nothing_shown_is_refused(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert "no run selected to rate" in log_text(app)


async def test_an_error_while_a_run_goes_stops_the_app_naming_the_error_and_the_run(tmp_path, store, capsys):
    from deepresearch.app.commands.tui import crashed

    app = make_app(tmp_path, store, model=ScriptedModel(default_script(), delay_s=60))  # the run stays busy

    def broken() -> None:
        raise RuntimeError("a bug in a key binding")

    app.action_focus_question = broken
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await ask(app, pilot)
            for _ in range(200):
                if app.live is not None and store.list_runs():
                    break
                await pilot.pause(0.05)
            run_id = app.live.run_id
            await pilot.press("ctrl+n")
            await pilot.pause()
    except RuntimeError:
        pass  # run_test re-raises what stopped the app
    assert isinstance(app.crash, RuntimeError) and app.crash_run == run_id
    assert store.get_run(run_id).status == "interrupted"  # the exit cancelled it: resumable
    capsys.readouterr()
    assert crashed(app, tmp_path, store.path).exit_code == 1
    log = tmp_path / "tui-error.log"
    assert capsys.readouterr().err.split() == (
        f"error: the TUI stopped: RuntimeError: a bug in a key binding (traceback in {log}); run {run_id} is "
        f"interrupted: continue it with deepresearch ask --resume {run_id}").split()
    assert "Traceback" in log.read_text() and "a bug in a key binding" in log.read_text()
