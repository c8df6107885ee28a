"""The TUI's actions on a run: review the plan (accept, edit, reject), cancel, save the report. Every
input the user types is refused in one line when it is bad, and what was typed stays where it was."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.app.tui.screens import PlanReview, SaveReport
from textual.widgets import DataTable, Input, Static, TextArea

from .conftest import default_script
from .fakes import ScriptedModel
from .test_tui import ask, log_text, make_app


async def until(pilot, condition, timeout_s: float = 15.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("the TUI never got there")


def error_of(app, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def review_plan(app, pilot) -> PlanReview:
    await app.workers.wait_for_complete()
    await pilot.press("ctrl+r")  # plans wait for review (off by default: agent.auto_approve)
    await ask(app, pilot)
    await until(pilot, lambda: isinstance(app.screen, PlanReview))
    return app.screen


def row_status(app, run_id: str) -> str:
    return str(app.query_one("#runs", DataTable).get_row(run_id)[0])


async def test_plan_accepted_as_proposed(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await review_plan(app, pilot)
        lines = screen.query_one("#plan-text", TextArea).text.splitlines()  # the proposed plan, one step a line
        assert {"search: Ada Lovelace born", "search: Analytical Engine designed"} <= set(lines)
        run_id = app.live.run_id
        await until(pilot, lambda: row_status(app, run_id) == "plan review")  # the waiting run is in the list
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        run = store.get_run(run_id)
        assert run.status == "finished" and "1815" in (run.answer or "")
        assert [e.payload["decision"]["action"] for e in store.events(run_id, kind="plan_decision")] == ["accept"]


async def test_plan_edited_runs_the_edited_steps(tmp_path, store, toolbox):
    app = make_app(tmp_path, store, toolbox=toolbox)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await review_plan(app, pilot)
        screen.query_one("#plan-text", TextArea).text = "search: London capital\nLovelace: born where"
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        run = store.list_runs()[0]
        decision = store.events(run.id, kind="plan_decision")[0].payload["decision"]
        assert decision["action"] == "edit"
        assert [(s["tool"], s["query"]) for s in decision["steps"]] == [
            ("search", "London capital"), ("search", "Lovelace: born where")]  # a colon after words is query text
        searched = [raw.get("query") for name, raw in toolbox.invocations if name == "search"]
        assert "London capital" in searched and "Ada Lovelace born" not in searched
        assert "plan edited: 2 step(s)" in log_text(app)


async def test_bad_plan_edits_are_refused_and_the_text_is_kept(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await review_plan(app, pilot)
        area = screen.query_one("#plan-text", TextArea)
        for text, reason in [("serch: London capital", "step 1: unknown tool 'serch' (choose from search, open)"),
                             ("  \n\n", "an edited plan needs at least one step"),
                             ("search: London\nopen:", "step 2: 'open:' has no query after it")]:
            area.text = text
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is screen and error_of(app, "#plan-error") == f"✗ {reason}"
            assert area.text == text  # nothing lost: fix it in place
            assert app.live is not None and app.live.status == "awaiting_approval"  # the run still waits
        area.text = "search: London capital"
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        assert store.list_runs()[0].status == "finished"


async def test_plan_rejected_ends_the_run(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_plan(app, pilot)
        await pilot.press("ctrl+r")  # in the dialog: reject
        await app.workers.wait_for_complete()
        run = store.list_runs()[0]
        assert run.status == "rejected" and not isinstance(app.screen, PlanReview)
        assert row_status(app, run.id) == "rejected"


async def test_cancel_a_running_question(tmp_path, store):
    slow = ScriptedModel(default_script(), delay_s=60)  # the planner never answers in time
    app = make_app(tmp_path, store, model=slow)
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(app, pilot, "Who designed the Analytical Engine?")
        await until(pilot, lambda: slow.requests)
        run_id = app.live.run_id
        table = app.query_one("#runs", DataTable)
        assert table.get_row(run_id) == ["running…", "Who designed the Analytical Engine?", run_id[:8]]
        await pilot.press(*"next one", "enter")  # a second question waits; it is not lost
        assert "press esc to cancel it first" in log_text(app)
        assert app.query_one("#question", Input).value == "next one"
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.live is None and store.get_run(run_id).status == "interrupted"
        assert row_status(app, run_id) == "interrupted"
        assert f"deepresearch ask --resume {run_id}" in log_text(app)
        await pilot.press("escape")
        assert "no run in progress to cancel" in log_text(app)


async def test_cancel_while_the_plan_waits_for_review(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_plan(app, pilot)
        run_id = app.live.run_id
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, PlanReview) and store.get_run(run_id).status == "interrupted"


async def finished_run(app, pilot) -> None:
    await ask(app, pilot)
    await app.workers.wait_for_complete()
    await pilot.pause()


async def save_as(app, pilot, path: str) -> SaveReport:
    if not isinstance(app.screen, SaveReport):
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, SaveReport))
    screen = app.screen
    screen.query_one("#save-path", Input).value = path
    await pilot.press("enter")
    await until(pilot, lambda: app.screen is not screen or "saving" not in error_of(app, "#save-error"))
    return screen


async def test_save_report_as_md_html_json(tmp_path, store, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await finished_run(app, pilot)
        run = store.list_runs()[0]
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, SaveReport))
        assert app.screen.query_one("#save-path", Input).value == str(tmp_path / f"report-{run.id}.md")
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, SaveReport))
        assert (tmp_path / f"report-{run.id}.md").read_text() == run.report
        await save_as(app, pilot, str(tmp_path / "r.html"))
        html = (tmp_path / "r.html").read_text()
        assert "1815" in html and "She was born in London in 1815." in html
        await save_as(app, pilot, str(tmp_path / "r.json"))
        assert json.loads((tmp_path / "r.json").read_text())["id"] == run.id
        assert f"saved the json report of run {run.id}" in log_text(app)


async def test_bad_save_paths_are_refused_and_the_path_is_kept(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await finished_run(app, pilot)
        (tmp_path / "afile").write_text("x")
        for path, reason in [(f"{tmp_path}/missing/r.md", f"directory {tmp_path}/missing does not exist"),
                             (str(tmp_path), f"{tmp_path} is a directory; give a file name"),
                             ("/proc/r.md", "cannot write /proc/r.md: No such file or directory"),
                             ("   ", "give a file name")]:
            screen = await save_as(app, pilot, path)
            assert app.screen is screen and error_of(app, "#save-error") == f"✗ {reason}"
            assert screen.query_one("#save-path", Input).value == path
        await pilot.press("escape")  # closes the dialog; the run goes on living
        await pilot.pause()
        assert not isinstance(app.screen, SaveReport) and "save cancelled: nothing written" in log_text(app)
        assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".md") == []
        assert (tmp_path / "afile").read_text() == "x"


async def test_save_without_a_report_offers_json(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test(size=(120, 40)) as pilot:
        await review_plan(app, pilot)
        await pilot.press("ctrl+r")  # rejected: the run has no report
        await app.workers.wait_for_complete()
        run = store.list_runs()[0]
        screen = await save_as(app, pilot, str(tmp_path / "r.md"))
        assert error_of(app, "#save-error") == (
            f"✗ run {run.id} has no report (rejected); save it as .json to keep what it has")
        assert app.screen is screen and not (tmp_path / "r.md").exists()
        await save_as(app, pilot, str(tmp_path / "r.json"))
        assert Path(tmp_path / "r.json").is_file()


async def test_save_with_nothing_shown_is_refused(tmp_path, store):
    app = make_app(tmp_path, store)
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert not isinstance(app.screen, SaveReport) and "no report to save" in log_text(app)
