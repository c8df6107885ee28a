"""`deepresearch tui`: ask questions, watch the research live, read reports, rate them.

Ratings go to the trace store as feedback, which `deepresearch train --from-runs` turns into reward.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from deepresearch.agent.config import question_problem
from deepresearch.agent.graph.events import (
    ActionStarted,
    BridgeChosen,
    CitationsChecked,
    FindingMade,
    PlanMade,
    RunEvent,
    Stopped,
)
from deepresearch.agent.graph.state import PlanStep
from deepresearch.app.runtime import AgentRuntime, answering_policy
from rich.markup import escape
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Footer, Header, Input, Markdown, RichLog

RuntimeFactory = Callable[[], AbstractAsyncContextManager[AgentRuntime]]


def describe(event: RunEvent) -> str | None:
    """One log line per progress event."""
    match event:
        case PlanMade(steps=steps, replan=replan):
            return _plan_line(steps, replan)
        case BridgeChosen(step=step) if step is not None:
            return _plan_line([step], replan=True)
        case ActionStarted(step=sid, tool=tool, input=value):
            return f"  step {sid}: {tool}({value[:60]!r})"
        case FindingMade(finding=finding):
            return f"  [green]evidence[/green] from {finding['title'] or finding['source']}"
        case Stopped(detail=detail):
            return f"[yellow]{detail}[/yellow]"
        case CitationsChecked(verified=verified, removed=removed):
            return f"[b]report[/b]: {verified} verified citation(s), {removed} removed"
    return None


def _plan_line(steps: list[PlanStep], replan: bool) -> str:
    head = "re-planned" if replan else "plan"
    return f"[b]{head}[/b]: " + "; ".join(f"{s['tool']} {s['query']!r}" for s in steps)


class ResearchApp(App[None]):
    TITLE = "deepresearch"
    CSS = """
    #runs { width: 38%; }
    #report { height: 2fr; border: round $accent; }
    #log { height: 1fr; border: round $secondary; }
    """
    BINDINGS = [
        Binding("ctrl+n", "focus_question", "New question"),
        Binding("plus,equals_sign", "rate(1)", "Good answer"),
        Binding("minus", "rate(-1)", "Bad answer"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, runtime_factory: RuntimeFactory):
        super().__init__()
        self.runtime_factory = runtime_factory
        self.runtime: AgentRuntime | None = None
        self._runtime_cm: AbstractAsyncContextManager[AgentRuntime] | None = None
        self.current_run: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="Ask a research question and press Enter", id="question")
        with Horizontal():
            yield DataTable(id="runs", cursor_type="row")
            with Vertical():
                yield Markdown("Loading the model…", id="report")
                yield RichLog(id="log", markup=True, wrap=True)
        yield Footer()

    async def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        table.add_columns("run", "status", "question")
        self.start_runtime()

    @work(exclusive=True, group="runtime")
    async def start_runtime(self) -> None:
        self._runtime_cm = self.runtime_factory()
        self.runtime = await self._runtime_cm.__aenter__()
        self.refresh_runs()
        await self.query_one("#report", Markdown).update("Ready. Type a question above and press Enter.")

    async def on_unmount(self) -> None:
        if self._runtime_cm is not None:
            await self._runtime_cm.__aexit__(None, None, None)

    def refresh_runs(self) -> None:
        if self.runtime is None:
            return
        table = self.query_one("#runs", DataTable)
        table.clear()
        for run in self.runtime.store.list_runs(limit=50):
            rating = f" ({run.feedback[-1]['score']:+g})" if run.feedback else ""
            table.add_row(run.id, run.status + rating, run.question[:60], key=run.id)

    @on(Input.Submitted, "#question")
    def ask(self, message: Input.Submitted) -> None:
        question = message.value.strip()
        log = self.query_one("#log", RichLog)
        if not question:
            log.write("[red]type a question first[/red]")
            return
        if self.runtime is None:
            log.write("[yellow]the model is still loading; try again in a moment[/yellow]")
            return
        if problem := question_problem(question, self.runtime.settings.agent):
            log.write(f"[red]{escape(problem)}[/red]")
            return
        message.input.value = ""
        self.research(question)

    @work(exclusive=True, group="research")
    async def research(self, question: str) -> None:
        from deepresearch.agent.graph.run import RunOptions, research

        assert self.runtime is not None
        rt, log = self.runtime, self.query_one("#log", RichLog)
        log.write(f"[b]question[/b]: {question}")
        await self.query_one("#report", Markdown).update(f"# {question}\n\n_researching…_")

        def on_event(event: RunEvent) -> None:
            if line := describe(event):
                log.write(line)

        options = RunOptions(checkpoint_path=rt.settings.paths.checkpoints_db, on_event=on_event,
                             settings_snapshot=rt.snapshot())
        result = await research(question, rt.research_runtime(), answering_policy(rt.settings), options)
        self.current_run = result.run_id
        await self.query_one("#report", Markdown).update(result.report or f"_run ended: {result.status}_")
        log.write(f"run {result.run_id}: {result.status} · rate it with + or -")
        self.refresh_runs()

    @on(DataTable.RowSelected, "#runs")
    async def show_run(self, message: DataTable.RowSelected) -> None:
        if self.runtime is None or message.row_key.value is None:
            return
        run = self.runtime.store.get_run(message.row_key.value)
        self.current_run = run.id
        await self.query_one("#report", Markdown).update(run.report or f"_{run.status}: no report_")

    def action_focus_question(self) -> None:
        self.query_one("#question", Input).focus()

    def action_rate(self, score: int) -> None:
        log = self.query_one("#log", RichLog)
        if self.runtime is None or self.current_run is None:
            log.write("[yellow]no run selected to rate[/yellow]")
            return
        self.runtime.store.add_feedback(self.current_run, float(score))
        log.write(f"rated run {self.current_run} {score:+d}: it will count as reward in training")
        self.refresh_runs()
