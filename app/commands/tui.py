"""`deepresearch tui`: the terminal UI."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..console import fail
from ..settings import get_settings

if TYPE_CHECKING:
    from ..tui.app import ResearchApp


def tui(
    offline: bool = typer.Option(False, "--offline", help="search the local index only"),
    index: str | None = typer.Option(None, "--index", help="local index to search (default from "
                                     "settings: {settings.index})"),
    approve: bool = typer.Option(False, "--approve", help="review, edit or reject each plan before it runs "
                                 "(ctrl+r toggles it in the app)"),
) -> None:
    """Ask questions, review plans, watch the research live, cancel it, save reports and rate them
    (+ / - in the report pane, ctrl+g / ctrl+f anywhere) for training."""
    import sys

    from ..runtime import ensure_index, open_runtime, with_served_adapter
    from ..tui.app import ResearchApp

    if not sys.stdout.isatty():
        raise fail("the TUI needs a terminal; use `deepresearch ask` in scripts")
    settings = with_served_adapter(get_settings())
    if approve:
        settings = settings.model_copy(update={"agent": settings.agent.model_copy(update={"auto_approve": False})})
    try:
        ensure_index(settings, index or settings.index)
    except LookupError as exc:
        raise fail(str(exc)) from None
    app = ResearchApp(lambda: open_runtime(settings, offline=offline, index=index))
    app.run()
    if app.crash is not None:
        raise crashed(app, settings.data_dir, settings.paths.traces_db)
    if app.return_code:
        raise typer.Exit(app.return_code)


def crashed(app: ResearchApp, data_dir: Path, traces_db: Path) -> typer.Exit:
    """One line for what stopped the app: the error (as every command names it), the run it stopped and how to
    continue that run; an unexpected error's traceback goes to a file, named in the line."""
    from ..errors import describe

    error = app.crash
    assert error is not None
    known = describe(error)
    if known is not None:
        message, code = known
    else:
        log = data_dir / "tui-error.log"
        try:
            log.parent.mkdir(parents=True, exist_ok=True)
            log.write_text(app.crash_details, encoding="utf-8")
            where = f" (traceback in {log})"
        except OSError:
            where = ""
        message, code = f"{type(error).__name__}: {error}{where}", 1
    if app.crash_run is not None:
        message += run_state(traces_db, app.crash_run)
    return fail(f"the TUI stopped: {message}", code=code)


def run_state(traces_db: Path, run_id: str) -> str:
    """What became of the run the app was busy with, as the store has it after the exit."""
    from deepresearch.agent.trace.store import RunNotFound, TraceStore

    try:
        store = TraceStore(traces_db)
        try:
            status = store.get_run(run_id).status
        finally:
            store.close()
    except RunNotFound:
        return ""  # it had not started
    except Exception:  # the store is what failed
        return f"; run {run_id} was going"
    if status in ("interrupted", "running", "error"):
        return f"; run {run_id} is {status}: continue it with deepresearch ask --resume {run_id}"
    return f"; run {run_id} is {status}"


TUI_EXAMPLES = """Examples:
  deepresearch tui                              (type a question, press Enter; ctrl+q quits)
  deepresearch tui --approve                    (review, edit or reject each plan before it runs)
  deepresearch tui --offline --index mine       (your own documents only)
Keys: ctrl+n ask · esc cancel the run · ctrl+r plan review on/off · ctrl+s save the report · + / - rate it.
A stopped run continues with: deepresearch ask --resume RUN_ID"""


def register(app: typer.Typer) -> None:
    app.command("tui", epilog=TUI_EXAMPLES)(tui)
