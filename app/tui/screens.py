"""The TUI's two dialogs: reviewing a plan (accept as proposed, edit, reject) and saving a report.

Both keep what the user typed when it is refused: the reason is one line under the field, the dialog
stays open, and nothing reaches the run or the disk until the input is good.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from deepresearch.agent.trace import export as trace_export
from deepresearch.agent.trace.store import TraceStore
from deepresearch.tools.config import BrowserSettings
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static, TextArea

from ..file_output import write_output
from ..report_export import ExportInputError, check_out, choose_format, render_report
from ..report_view import view_of_run
from ..service.runs import PlanDecision, RunProblem
from .render import plan_decision, plan_text

DIALOG_CSS = """
PlanReview, SaveReport { align: center middle; }
.dialog { width: 90%; max-width: 110; height: auto; max-height: 90%; border: thick $accent;
          background: $surface; padding: 0 1; }
.dialog Label { width: 100%; }
.dialog TextArea { height: 8; }
.dialog .error { color: $error; height: auto; }
.dialog Horizontal { height: auto; }
.dialog Button { margin-right: 2; }
"""


class PlanReview(ModalScreen[None]):
    """The run waits here after planning. `decide` is the run's own decision hook (the service's
    LiveRun.decide): it refuses a bad edit with RunProblem and leaves the run waiting."""

    BINDINGS = [
        Binding("ctrl+s", "run_plan", "Run this plan", priority=True),
        Binding("ctrl+r", "reject", "Reject (ends the run)", priority=True),
        Binding("escape", "app.cancel_run", "Cancel run"),
    ]

    def __init__(self, plan: list[dict[str, Any]], tools: list[str], decide: Callable[[PlanDecision], None]):
        super().__init__()
        self.plan, self.tools, self.decide = plan, tools, decide

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("[b]Proposed plan[/b] — one step per line as 'tool: query' "
                        f"(tools: {', '.join(self.tools)}); edit it or run it as it is")
            yield TextArea(plan_text(self.plan), id="plan-text", soft_wrap=True)
            yield Static("", id="plan-error", classes="error", markup=False)
            with Horizontal():
                yield Button("Run plan  ^s", id="run-plan", variant="primary")
                yield Button("Reject  ^r", id="reject-plan", variant="error")

    def on_mount(self) -> None:
        self.query_one("#plan-text", TextArea).focus()

    def action_run_plan(self) -> None:
        error = self.query_one("#plan-error", Static)
        try:
            self.decide(plan_decision(self.query_one("#plan-text", TextArea).text, self.plan))
        except ValueError as exc:
            error.update(f"✗ {exc}")
            return
        except RunProblem as exc:
            error.update(f"✗ {exc.message}")
            return
        self.dismiss()

    def action_reject(self) -> None:
        self.decide(PlanDecision(action="reject"))
        self.dismiss()

    @on(Button.Pressed, "#run-plan")
    def _run_pressed(self) -> None:
        self.action_run_plan()

    @on(Button.Pressed, "#reject-plan")
    def _reject_pressed(self) -> None:
        self.action_reject()


class SaveReport(ModalScreen[str | None]):
    """Asks where to save the shown report; dismisses with what was written, or None if closed."""

    BINDINGS = [Binding("escape", "close", "Close (nothing saved)", priority=True)]

    def __init__(self, default: Path, save: Callable[[Path], Awaitable[str]]):
        super().__init__()
        self.default, self.save = default, save

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("[b]Save the report[/b] — the suffix picks the format: .md .html .pdf .json")
            yield Input(str(self.default), id="save-path")
            yield Static("", id="save-error", classes="error", markup=False)

    @on(Input.Submitted, "#save-path")
    async def _submitted(self, message: Input.Submitted) -> None:
        error = self.query_one("#save-error", Static)
        if not message.value.strip():
            error.update("✗ give a file name")
            return
        error.update("saving…")
        try:
            saved = await self.save(Path(message.value.strip()).expanduser())
        except ValueError as exc:
            error.update(f"✗ {exc}")
            return
        self.dismiss(saved)

    def action_close(self) -> None:
        self.dismiss(None)


async def save_report(store: TraceStore, run_id: str, path: Path, browser: BrowserSettings) -> str:
    """Write run `run_id`'s report to `path` with the export code `ask --out` uses; one-line ValueError
    for anything that stops it (nothing is written then: write_output moves a whole file into place)."""
    from ..report_pdf import PdfError

    run = store.get_run(run_id)
    try:
        fmt = choose_format(None, path) or "md"
        check_out(path)
    except ExportInputError as exc:
        raise ValueError(str(exc).removeprefix("--out: ")) from None
    if fmt == "json":
        data = (trace_export.collect(store, [run.id])[0].model_dump_json(indent=2) + "\n").encode("utf-8")
    elif not run.report:
        raise ValueError(f"run {run.id} has no report ({run.status}); save it as .json to keep what it has")
    else:
        try:  # off the loop: a PDF is printed by Chromium and takes seconds
            data = await asyncio.to_thread(render_report, view_of_run(run), fmt, browser)
        except PdfError as exc:
            raise ValueError(str(exc)) from None
    try:
        write_output(path, data)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from None
    return f"saved the {fmt} report of run {run.id} to {path}"
