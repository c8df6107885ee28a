"""`deepresearch tui`: ask questions, review the plan, watch the research live, cancel it, read reports,
save them and rate them.

Ratings go to the trace store as feedback, which `deepresearch train --from-runs` turns into reward.
A run here is driven as the HTTP API drives one: the service's LiveRun is the graph's approve callback
(its `review` waits for a decision, its `decide` checks an edit with the graph's own apply_edit), so a
plan edited in the TUI is refused or applied exactly as one posted to POST /runs/{id}/plan.
"""

from __future__ import annotations

import asyncio
import traceback
import uuid
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from pathlib import Path
from typing import Any

from deepresearch.agent.config import question_problem
from deepresearch.agent.graph.events import RunEvent
from deepresearch.app.runtime import AgentRuntime, answering_policy
from rich.markup import escape
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Markdown, RichLog
from textual.worker import Worker, WorkerFailed

from ..report_view import report_view, view_of_run
from ..service.runs import AssignedStore, LiveRun
from .render import describe, report_markdown
from .screens import DIALOG_CSS, PlanReview, SaveReport, save_report

__all__ = ["ResearchApp", "describe"]

RuntimeFactory = Callable[[], AbstractAsyncContextManager[AgentRuntime]]
# Not in the footer (80 columns hold the app's keys only); the report pane's border names them instead.
RATE_KEYS = [Binding("plus,equals_sign", "app.rate(1)", "Good", show=False),
             Binding("minus", "app.rate(-1)", "Bad", show=False)]
STATUS_LABELS = {"awaiting_approval": "plan review", "running": "running…"}


class ReportPane(VerticalScroll, can_focus=True):
    """The report, focusable so that + and - rate it (in the question box they are just characters)."""

    BINDINGS = RATE_KEYS


class RunsTable(DataTable[str]):
    BINDINGS = RATE_KEYS


class ResearchApp(App[None]):
    TITLE = "deepresearch"
    CSS = DIALOG_CSS + """
    #runs { width: 38%; }
    #report-pane { height: 2fr; border: round $accent; }
    #report-pane:focus { border: round $warning; }
    #log { height: 1fr; border: round $secondary; }
    """
    BINDINGS = [
        # Short labels: the footer must fit 80 columns.
        Binding("ctrl+n", "focus_question", "Ask"),
        Binding("escape", "cancel_run", "Cancel"),
        Binding("ctrl+r", "toggle_review", "Review"),
        Binding("ctrl+s", "save", "Save"),
        Binding("ctrl+g", "rate(1)", "Good"),
        Binding("ctrl+f", "rate(-1)", "Bad"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, runtime_factory: RuntimeFactory):
        super().__init__()
        self.runtime_factory = runtime_factory
        self.runtime: AgentRuntime | None = None
        self._runtime_cm: AbstractAsyncContextManager[AgentRuntime] | None = None
        self.current_run: str | None = None  # the run the report pane shows: what save and rate act on
        self.live: LiveRun | None = None  # the run in progress, if any
        self._research_worker: Worker[None] | None = None
        self.review_plans = False
        # What stopped the app, if anything did: the error and the run it stopped or that had just failed on it
        # (the exit cancels a run in progress: interrupted, resumable). commands/tui.py says so.
        self.crash: BaseException | None = None
        self.crash_run: str | None = None
        self.crash_details: str = ""
        self._failed_run: str | None = None  # the run whose research() just raised, until its worker ends

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="Ask a research question and press Enter", id="question")
        with Horizontal():
            yield RunsTable(id="runs", cursor_type="row")
            with Vertical():
                with ReportPane(id="report-pane") as pane:
                    pane.border_title = "report"
                    pane.border_subtitle = "+ good  - bad"
                    yield Markdown("Loading the model…", id="report")
                # min_width: RichLog renders lines at least 78 wide by default, which clips them in a narrow pane.
                yield RichLog(id="log", markup=True, wrap=True, min_width=20)
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one("#runs", DataTable).add_columns("status", "question", "run")
        self.start_runtime()

    @work(exclusive=True, group="runtime")
    async def start_runtime(self) -> None:
        self._runtime_cm = self.runtime_factory()
        self.runtime = await self._runtime_cm.__aenter__()
        self.review_plans = not self.runtime.settings.agent.auto_approve
        self._show_review_mode()
        self.refresh_runs()
        await self.query_one("#report", Markdown).update("Ready. Type a question above and press Enter.")

    def _handle_exception(self, error: Exception) -> None:
        """Any unhandled error ends the app (Textual's way); instead of Textual's full-screen traceback the
        command prints one line naming the error and the run it stopped (app/commands/tui.py)."""
        if isinstance(error, WorkerFailed):  # a worker's error, wrapped by Textual
            error = error.error
        if self.crash is None:
            self.crash = error
            self.crash_run = self.live.run_id if self.live is not None else self._failed_run
            self.crash_details = "".join(traceback.format_exception(error))
        super()._handle_exception(error)
        self._exit_renderables.clear()

    async def on_unmount(self) -> None:
        if self._runtime_cm is not None:
            await self._runtime_cm.__aexit__(None, None, None)

    def log_line(self, markup: str) -> None:
        self.query_one("#log", RichLog).write(markup)

    def refresh_runs(self) -> None:
        """The stored runs, newest first, with the run in progress on top even before the store has it."""
        if self.runtime is None:
            return
        table = self.query_one("#runs", DataTable)
        table.clear()
        live = self.live
        runs = self.runtime.store.list_runs(limit=50)
        # Status, question, then an 8-character id (a unique prefix serves `runs show`): at 80 columns the
        # list is 30 wide, and a full id first left no room for the question nor the status.
        if live is not None and all(run.id != live.run_id for run in runs):
            table.add_row(STATUS_LABELS[live.status], live.question[:60], live.run_id[:8], key=live.run_id)
        for run in runs:
            status = live.status if live is not None and run.id == live.run_id else run.status
            rating = f" ({run.feedback[-1]['score']:+g})" if run.feedback else ""
            table.add_row(STATUS_LABELS.get(status, status) + rating, run.question[:60], run.id[:8], key=run.id)

    @on(Input.Submitted, "#question")
    def ask(self, message: Input.Submitted) -> None:
        question = message.value.strip()
        if not question:
            self.log_line("[red]type a question first[/red]")
            return
        if self.runtime is None:
            self.log_line("[yellow]the model is still loading; try again in a moment[/yellow]")
            return
        if self.live is not None:  # the question stays in the box for when this run ends
            self.log_line(f"[yellow]run {self.live.run_id} is still going: press esc to cancel it first[/yellow]")
            return
        if problem := question_problem(question, self.runtime.settings.agent):
            self.log_line(f"[red]{escape(problem)}[/red]")
            return
        message.input.value = ""
        self.live = LiveRun(run_id=uuid.uuid4().hex[:12], question=question, status="running",
                            tools=self.runtime.toolbox.names())
        self._research_worker = self.research(self.live)

    @work(exclusive=True, group="research")
    async def research(self, live: LiveRun) -> None:
        from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research

        assert self.runtime is not None
        rt, question = self.runtime, live.question
        report = self.query_one("#report", Markdown)

        def on_event(event: RunEvent) -> None:
            live.publish(event)
            if line := describe(event):
                self.log_line(line)

        async def review(plan: list[dict[str, Any]]) -> dict[str, Any]:
            self.push_screen(PlanReview(plan, live.tools, live.decide))
            self.call_later(self.refresh_runs)  # by then live.review has set the status to awaiting_approval
            decision = await live.review(plan)
            action = decision["action"]
            self.log_line(f"plan edited: {len(decision['steps'])} step(s)" if action == "edit" else f"plan {action}ed")
            self.call_later(self.refresh_runs)
            return decision

        # The store names the run with the id chosen in `ask`, so the list shows it from the first moment.
        store = AssignedStore(rt.store.path, live.run_id)
        agent = rt.settings.agent.model_copy(update={"auto_approve": not self.review_plans})
        snapshot = rt.snapshot()
        snapshot["agent"]["auto_approve"] = agent.auto_approve  # recorded as it ran: replays review alike
        options = RunOptions(checkpoint_path=rt.settings.paths.checkpoints_db, approve=review, on_event=on_event,
                             settings_snapshot=snapshot)
        self.current_run = live.run_id
        self.log_line(f"[b]question[/b]: {escape(question)}")
        self.refresh_runs()
        try:
            await report.update(f"# {question}\n\n_researching…_")
            result = await research(question, ResearchRuntime(model=rt.model, toolbox=rt.toolbox, store=store,
                                                              settings=agent),
                                    answering_policy(rt.settings), options)
        except asyncio.CancelledError:
            # research() left the run "interrupted" and its checkpoint: `deepresearch ask --resume ID` continues it.
            if isinstance(self.screen, PlanReview):
                self.pop_screen()
            self.log_line(f"[yellow]cancelled run {live.run_id}[/yellow]; continue it with "
                          f"deepresearch ask --resume {live.run_id}")
            report.update(f"# {question}\n\n_cancelled_")  # not awaited: this task is being cancelled
            raise
        except Exception as exc:  # one failed run must not take the app down with it (research() ended it)
            self._failed_run = live.run_id  # named if what failed it (a damaged store) stops the app next
            self.log_line(f"[red]run {live.run_id} failed: {escape(f'{type(exc).__name__}: {exc}')}[/red]")
            return
        finally:
            store.close()
            self.live = None
            self.refresh_runs()
            self._failed_run = None
        view = report_view(run_id=result.run_id, question=question, status=result.status, answer=result.answer,
                           report=result.report, citations=result.citations)
        await report.update(report_markdown(view))
        self.log_line(f"run {result.run_id}: {result.status} · rate it with + / - (report pane) or ^g / ^f")
        if not self.query_one("#question", Input).value:  # never pull focus from a question being typed
            self.query_one("#report-pane").focus()

    @on(DataTable.RowSelected, "#runs")
    async def show_run(self, message: DataTable.RowSelected) -> None:
        if self.runtime is None or message.row_key.value is None:
            return
        self.current_run = message.row_key.value
        if self.live is not None and self.live.run_id == self.current_run:
            await self.query_one("#report", Markdown).update(f"# {self.live.question}\n\n_researching…_")
            return
        run = self.runtime.store.get_run(self.current_run)
        await self.query_one("#report", Markdown).update(report_markdown(view_of_run(run)))

    def action_focus_question(self) -> None:
        self.query_one("#question", Input).focus()

    def action_cancel_run(self) -> None:
        if self.live is None or self._research_worker is None:
            self.log_line("[yellow]no run in progress to cancel[/yellow]")
            return
        self._research_worker.cancel()

    def _show_review_mode(self) -> None:
        self.sub_title = "plan review on" if self.review_plans else "plan review off"

    def action_toggle_review(self) -> None:
        self.review_plans = not self.review_plans
        self._show_review_mode()
        self.log_line("plans will wait for your review (^s run, ^r reject)" if self.review_plans
                      else "plans will run without review")

    def action_save(self) -> None:
        if self.runtime is None or self.current_run is None:
            self.log_line("[yellow]no report to save: ask a question or pick a run in the list[/yellow]")
            return
        save = partial(save_report, self.runtime.store, self.current_run, browser=self.runtime.settings.tools.browser)
        default = Path.cwd() / f"report-{self.current_run}.md"

        def saved(message: str | None) -> None:
            self.log_line(escape(message) if message else "save cancelled: nothing written")

        self.push_screen(SaveReport(default, save), callback=saved)

    def action_rate(self, score: int) -> None:
        if self.runtime is None or self.current_run is None:
            self.log_line("[yellow]no run selected to rate[/yellow]")
            return
        if self.live is not None and self.live.run_id == self.current_run:
            self.log_line("[yellow]this run is still going: rate it when its report is in[/yellow]")
            return
        from ..feedback import record_feedback

        record_feedback(self.runtime.store, self.runtime.settings.tools, self.current_run, float(score))
        self.log_line(f"rated run {self.current_run} {score:+d}: it will count as reward in training")
        self.refresh_runs()
