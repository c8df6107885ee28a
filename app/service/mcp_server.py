"""The MCP server of `deepresearch mcp` (the official `mcp` SDK, v2 `MCPServer`): tools for agents and
desktop clients.

  research(question, offline, index, max_time)  research a question; one progress notification per
                                                 graph event while it runs; the cited report back
  search_index(query, index, k)                  search a local index (the bundled `demo` or your own)
  get_report(run_id, format)                     a stored run's report: md, html or json

Runs go through the service's RunManager, so they are the same graph, events and trace as `ask`'s, and
`deepresearch runs list` shows them. A failing tool returns an MCP error result with one line.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from deepresearch.agent.graph.events import (
    ActionStarted,
    BridgeChosen,
    CitationsChecked,
    FindingMade,
    HopSkipped,
    PlanMade,
    Replanning,
    StepsDispatched,
    Stopped,
    UsageReported,
)
from deepresearch.agent.trace.store import RunNotFound
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field, ValidationError

from deepresearch import __version__

from ..report_view import Section, Sentence, sections_of, view_of_run
from ..settings import Settings
from .events import SERVICE, decode
from .manager import RunManager
from .models import RunProblem, RunRequest


class ResearchAnswer(BaseModel):
    run_id: str
    status: str = Field(description="finished | budget_stop | loop_stop | error")
    answer: str
    report: str = Field(description="markdown with [n] citations and the sources with their quotes")
    verified_citations: int
    citations: list[dict[str, Any]]
    style: str = Field("answer", description="answer (key points) | extractive (quotes grouped by search) | written")
    sections: list[Section] = Field(default_factory=list, description="an open question's report: its sections, "
                                    "each sentence with the sources it rests on and its check")
    dropped: int = Field(0, description="sentences the check removed (written), quotes left out (extractive)")
    dropped_sentences: list[Sentence] = Field(default_factory=list, description="the removed sentences, with why")


def research_answer(result: Any) -> ResearchAnswer:
    return ResearchAnswer(run_id=result.run_id, status=result.status, answer=result.answer, report=result.report,
                          verified_citations=result.verified_citations, citations=result.citations,
                          **sections_of(result))


class Hit(BaseModel):
    doc_id: str
    title: str
    snippet: str
    score: float


def progress_message(name: str, data: dict[str, Any]) -> str:
    """One plain line per event, for a client's progress display."""
    event = decode(name, data)
    match event:
        case PlanMade(steps=steps, replan=replan):
            return ("re-planned: " if replan else "plan: ") + "; ".join(f"{s['tool']} {s['query']!r}" for s in steps)
        case BridgeChosen(search=search):
            return f"follow-up search for {search!r}"
        case HopSkipped(answer=answer, confidence=confidence):
            return f"no follow-up search: the sources read answer {answer!r} (confidence {confidence:.2f})"
        case StepsDispatched(round=r, steps=steps):
            return f"round {r}: steps {', '.join(map(str, steps))}"
        case ActionStarted(step=step, tool=tool, input=value):
            return f"step {step}: {tool}({value[:80]!r})"
        case FindingMade(finding=finding):
            return f"evidence from {finding['title'] or finding['source']}"
        case UsageReported(usage=usage, round=r):
            return f"round {r}: {usage.get('llm_tokens', 0)} tokens, {usage.get('tool_calls', 0)} tool calls"
        case Stopped(detail=detail) | Replanning(why=detail):
            return detail
        case CitationsChecked(verified=verified, removed=removed):
            return f"report written: {verified} verified citation(s), {removed} removed"
    return name if name not in SERVICE else f"run {data.get('status', '')}".strip()


def build_server(settings: Settings, *, manager: RunManager | None = None) -> MCPServer[Any]:
    state: dict[str, RunManager] = {}

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        state["runs"] = manager or RunManager(settings, max_concurrent=settings.api.max_concurrent_runs)
        try:
            yield None
        finally:
            await state["runs"].close()

    server: MCPServer[Any] = MCPServer(
        "deepresearch", version=__version__, lifespan=lifespan,
        instructions="Research questions with a cited report whose every citation is checked against its "
                     "source (research), search a local document index (search_index), read a past run's "
                     "report (get_report).",
    )

    @server.tool()
    async def research(question: str, ctx: Context, offline: bool = False, index: str | None = None,
                       max_time: float | None = None) -> ResearchAnswer:
        """Research a question: plan, search, read, and write a report whose citations are checked.
        offline: search the local index only. index: which local index (default 'demo', the bundled
        corpus). max_time: wall-time budget in seconds. Sends a progress notification per step."""
        try:
            request = RunRequest(question=question, offline=offline, index=index, approve=False, max_time=max_time)
            live = await state["runs"].start(request)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ToolError(f"{'.'.join(map(str, first['loc'])) or 'input'}: {first['msg']}") from None
        except RunProblem as exc:
            raise ToolError(exc.message) from None
        seen = 0
        while True:
            for name, data in live.events[seen:]:
                seen += 1
                await ctx.report_progress(seen, None, progress_message(name, data))
            if live.ended and seen == len(live.events):
                break
            await live.wait_beyond(seen)
        result = live.result
        assert result is not None
        if result.status == "error":
            raise ToolError(f"run {result.run_id} failed: {result.stop_detail}")
        return research_answer(result)

    @server.tool()
    async def search_index(query: str, index: str | None = None, k: int = 5) -> list[Hit]:
        """Search a local index (BM25, plus vectors when enabled) and return the best k documents.
        index: the index name (default 'demo'); build your own with `deepresearch index PATH --name NAME`."""
        import asyncio

        if not query.strip():
            raise ToolError("query: the query is empty")
        if not 1 <= k <= 50:
            raise ToolError("k: give 1 to 50")
        return await asyncio.to_thread(_search, settings, query, index or settings.index, k)

    @server.tool()
    async def get_report(run_id: str, format: Literal["md", "html", "json"] = "md") -> str:
        """A run's report by its id (a unique prefix is enough): markdown, one HTML page, or JSON (answer,
        key points with their citations or an open question's sections with each sentence's check, sources with
        quotes)."""
        store = state["runs"].store()
        try:
            run = store.get_run(run_id)
        except RunNotFound as exc:
            raise ToolError(str(exc)) from None
        finally:
            store.close()
        if not run.report:
            raise ToolError(f"run {run.id} has no report ({run.status})")
        view = view_of_run(run)
        if format == "json":
            return view.model_dump_json(indent=2)
        from ..report_export import render_report

        return render_report(view, format).decode("utf-8")

    return server


def _search(settings: Settings, query: str, index: str, k: int) -> list[Hit]:
    from deepresearch.tools.index.registry import IndexRegistry

    from ..runtime import ensure_index

    try:
        ensure_index(settings, index)
    except (LookupError, ValueError) as exc:
        raise ToolError(f"index: {exc}") from None
    registry = IndexRegistry(settings.tools)
    try:
        hits = registry.open(index).search(query, k)
    finally:
        registry.close()
    return [Hit(doc_id=h.doc_id, title=h.title, snippet=h.snippet, score=h.score) for h in hits]
