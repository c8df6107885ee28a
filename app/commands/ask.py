"""`deepresearch ask "question"`: research a question and print a cited report.

Exit codes: 0 finished · 1 the run failed (model or infrastructure error; see the trace) · 2 bad input
or settings · 3 stopped early by a budget or loop limit (a report is still written) · 4 plan rejected ·
130 interrupted (resume with --resume RUN_ID).
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import typer

from ..console import err, fail, out
from ..file_output import write_output
from ..plan_prompt import review_plan, stdin_reader
from ..progress import ResearchProgress
from ..report_export import FORMAT_HELP, ExportInputError, check_out, choose_format, render_report
from ..runtime import answering_policy, open_runtime, with_served_adapter
from ..settings import Settings, SettingsError, get_settings

EXIT_CODES = {"finished": 0, "error": 1, "budget_stop": 3, "loop_stop": 3, "rejected": 4}


def apply_overrides(settings: Settings, *, model: str | None, search: str | None, adapter: str | None,
                    max_time: float | None, auto_approve: bool | None) -> Settings:
    """CLI flags are the highest-precedence source: re-validate the merged settings."""
    data = settings.model_dump(mode="python")
    if model:
        if model == "embedded":
            data["model"]["backend"] = "embedded"
        elif model.startswith(("http://", "https://")):
            data["model"].update(backend="openai", base_url=model)
        else:
            data["model"]["name"] = model
    if adapter:
        from deepresearch.agent.model.policy import AdapterMode

        data["model"]["adapter"] = "" if adapter == AdapterMode.BASE else adapter  # "": the base model
    if search:
        data["tools"]["search"]["backends"] = [b.strip() for b in search.split(",") if b.strip()]
    if max_time:
        data["agent"]["budget"]["max_wall_s"] = max_time
    if auto_approve is not None:
        data["agent"]["auto_approve"] = auto_approve
    try:
        return Settings.model_validate(data)
    except Exception as exc:  # pydantic.ValidationError → one line
        first = exc.errors()[0] if hasattr(exc, "errors") else {"loc": (), "msg": str(exc)}
        raise SettingsError(f"bad setting '{'.'.join(map(str, first['loc']))}' (command-line flag): "
                            f"{first['msg']}") from None


async def ask_user_about_plan(plan: list[dict[str, Any]], progress: ResearchProgress) -> dict[str, Any]:
    """The plan review of `--approve`: on the terminal, or from stdin when it is a pipe (plan_prompt.py)."""
    progress.pause()
    err.print()
    return review_plan(plan, stdin_reader(err), lambda line: err.print(line, markup=False, highlight=False))


def result_json(result: Any, adapter: str | None) -> dict[str, Any]:
    from ..report_view import sections_of

    return {
        "run_id": result.run_id, "status": result.status, "stop_detail": result.stop_detail,
        "answer": result.answer, "report": result.report, "citations": result.citations,
        "verified_citations": result.verified_citations,
        "removed_citations": sum(1 for c in result.citations if not c.get("verified")),
        **sections_of(result), "usage": result.usage, "adapter": adapter, "errors": result.errors,
    }


async def _ask(settings: Settings, question: str | None, *, run_id: str, resume: str | None, offline: bool,
               index: str | None, quiet: bool, checkpoint: bool) -> Any:
    from deepresearch.agent.graph.run import RunOptions, research

    async with open_runtime(settings, offline=offline, index=index) as rt:
        with ResearchProgress(err, settings.agent.budget, quiet=quiet) as progress:
            async def approve(plan: list[dict[str, Any]]) -> dict[str, Any]:
                # Asked for (--approve, or auto_approve off): always a decision, never a silent accept.
                if settings.agent.auto_approve:
                    return {"action": "accept"}
                return await ask_user_about_plan(plan, progress)

            options = RunOptions(checkpoint_path=settings.paths.checkpoints_db if checkpoint else None,
                                 resume_run_id=resume, run_id=run_id, approve=approve, on_event=progress,
                                 settings_snapshot=rt.snapshot())
            return await research(question, rt.research_runtime(), answering_policy(settings), options)


def ask(
    question: str | None = typer.Argument(None, help="the question to research"),
    out_file: Path | None = typer.Option(None, "--out", "-o", help="write the report to this file (its suffix "
                                         "picks the format: .md .html .pdf .json)"),
    fmt: str | None = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    as_json: bool = typer.Option(False, "--json", help="machine-readable result: answer, report, citations, usage "
                                 "(= --format json)"),
    resume: str | None = typer.Option(None, "--resume", help="continue an interrupted run by its id"),
    offline: bool = typer.Option(False, "--offline", help="search the local index only"),
    index: str | None = typer.Option(None, "--index", help="local index to search (default from settings: "
                                     "{settings.index})"),
    search: str | None = typer.Option(None, "--search", help="search backends in order, e.g. 'searxng,ddg,local'"),
    model: str | None = typer.Option(None, "--model", help="'embedded', a server URL (…/v1), or a model name"),
    adapter: str | None = typer.Option(None, "--adapter", help="LoRA adapter to answer with "
                                       "('base' = the plain model; default: the served one)"),
    auto_approve: bool | None = typer.Option(None, "--auto-approve/--approve",
                                             help="skip / ask for plan approval (default from settings: "
                                                  "auto_approve={settings.agent.auto_approve})"),
    max_time: float | None = typer.Option(None, "--max-time", min=1, help="wall-time budget in seconds"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output"),
    checkpoint: bool = typer.Option(True, "--checkpoint/--no-checkpoint", help="save state for --resume"),
) -> None:
    """Research a question and print a report whose every citation is checked against its source."""
    if resume is None and (question is None or not question.strip()):
        raise fail("give a question, e.g. deepresearch ask \"Who designed the Analytical Engine?\", or --resume RUN_ID")
    if resume is not None and question:
        raise fail("give either a question or --resume RUN_ID, not both")
    try:
        chosen = choose_format(fmt, out_file, as_json=as_json) or "md"
        check_out(out_file)
    except ExportInputError as exc:
        raise fail(str(exc)) from None
    try:
        settings = with_served_adapter(apply_overrides(get_settings(), model=model, search=search,
                                                       adapter=adapter, max_time=max_time,
                                                       auto_approve=auto_approve))
    except SettingsError as exc:
        raise fail(str(exc)) from None
    from deepresearch.agent.config import question_problem

    if question is not None and (problem := question_problem(question, settings.agent)):
        raise fail(problem)
    from deepresearch.agent.graph.run import ResumeError
    from deepresearch.agent.model.base import ModelError
    from deepresearch.agent.trace.store import RunNotFound
    from deepresearch.tools.index.store import IndexNotFound

    run_id = uuid.uuid4().hex[:12]  # named here, so that Ctrl-C can say which run to resume
    try:
        result = asyncio.run(_ask(settings, question, run_id=run_id, resume=resume, offline=offline, index=index,
                                  quiet=quiet, checkpoint=checkpoint))
    except KeyboardInterrupt:
        err.print()
        err.print(interrupted_line(settings, resume or run_id, resumable=checkpoint), markup=False, highlight=False)
        raise typer.Exit(130) from None
    except (RunNotFound, ResumeError, IndexNotFound, ValueError) as exc:
        raise fail(str(exc)) from None
    except ModelError as exc:
        raise fail(str(exc), code=1) from None

    _emit(result, settings, chosen, out_file)
    if chosen != "json":
        err.print(f"run {result.run_id} · {result.status} · {result.verified_citations} verified citation(s) · "
                  f"{result.usage.get('llm_tokens', 0)} tokens · {result.usage.get('wall_s', 0)}s", highlight=False)
        if result.status == "error":
            err.print(f"[red]error:[/] {result.stop_detail}")
    raise typer.Exit(EXIT_CODES.get(result.status, 1))


def interrupted_line(settings: Settings, run_id: str, *, resumable: bool) -> str:
    """What Ctrl-C left: the run (already marked interrupted by research()) and how to continue it."""
    from deepresearch.agent.trace.store import RunNotFound, TraceStore

    try:
        store = TraceStore(settings.paths.traces_db)
        try:
            run = store.get_run(run_id)
        finally:
            store.close()
    except RunNotFound:
        return "interrupted before the run started; nothing was saved"
    except Exception as exc:  # the store itself failing is not what the user asked about here
        return f"interrupted run {run_id} (its state could not be read: {type(exc).__name__})"
    if not resumable:
        return f"interrupted run {run.id} ({run.status}); it ran with --no-checkpoint, so it cannot be resumed"
    return f"interrupted run {run.id} ({run.status}); continue it with: deepresearch ask --resume {run.id}"


def _emit(result: Any, settings: Settings, fmt: str, out_file: Path | None) -> None:
    """The report in the chosen format, to --out or stdout. The run is already stored: if printing
    fails (Chromium, a full disk), the error says how to export it again."""
    saved = f"the run is saved: deepresearch runs show {result.run_id} --out FILE.{fmt}"
    if fmt == "json":
        data = (json.dumps(result_json(result, settings.model.adapter), indent=2, ensure_ascii=False) + "\n").encode()
    elif fmt == "md":
        data = result.report.encode("utf-8")
    else:
        from deepresearch.agent.trace.store import TraceStore

        from ..report_pdf import PdfError
        from ..report_view import view_of_run

        store = TraceStore(settings.paths.traces_db)
        try:
            view = view_of_run(store.get_run(result.run_id))
        finally:
            store.close()
        try:
            data = render_report(view, fmt, settings.tools.browser)
        except PdfError as exc:
            raise fail(f"{exc}; {saved}", code=1) from None
    if out_file is None:
        if fmt == "md":
            out.print(result.report, markup=False, highlight=False)
        else:
            sys.stdout.write(data.decode("utf-8") + ("\n" if fmt != "json" else ""))
        return
    try:
        write_output(out_file, data)
    except OSError as exc:
        raise fail(f"cannot write {out_file} ({exc.strerror or exc}); {saved}", code=1) from None
    err.print(f"wrote {out_file}", markup=False, highlight=False)


ASK_EXAMPLES = """Examples:
  deepresearch ask "Who designed the Analytical Engine?"        (web search chain, then the local index)
  deepresearch ask --offline --index mine "…"                   (your own documents only)
  deepresearch ask --out report.pdf "…"                         (or .html .md .json; or --format)
  deepresearch ask --json "…" | jq .answer
  deepresearch ask --approve "…"                                (review, edit or reject the plan first)
  deepresearch ask --resume RUN_ID                              (continue an interrupted run)
  deepresearch ask --model http://gpu-box:8000/v1 "…"           (a bigger model on an OpenAI-compatible server)
Exit codes: 0 finished · 1 failed · 2 bad input · 3 stopped early by a budget or loop limit · 4 plan rejected ·
130 interrupted (resumable)"""


def register(app: typer.Typer) -> None:
    app.command("ask", epilog=ASK_EXAMPLES)(ask)
