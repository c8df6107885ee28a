"""`deepresearch tui`: the terminal UI."""

from __future__ import annotations

import typer

from ..console import fail
from ..settings import get_settings


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
    ResearchApp(lambda: open_runtime(settings, offline=offline, index=index)).run()


def register(app: typer.Typer) -> None:
    app.command("tui")(tui)
