"""`deepresearch runs list|show|export|feedback`: read the trace store."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import typer
from deepresearch.agent.trace import export as trace_export
from deepresearch.agent.trace.records import RunRecord
from deepresearch.agent.trace.store import RunNotFound, TraceStore
from rich.markup import escape
from rich.table import Column, Table

from ..console import err, fail, out
from ..file_output import write_output
from ..report_export import FORMAT_HELP, ExportInputError, check_out, choose_format, render_report
from ..settings import get_settings

runs_app = typer.Typer(help="Inspect, export and rate logged runs.", no_args_is_help=True, epilog="""Examples:
  deepresearch runs list --since 3d --status finished
  deepresearch runs show 3f2a --events
  deepresearch runs show 3f2a --out report.pdf          (or .html .md .json; or --format)
  deepresearch runs export runs.parquet --since 7d      (or .jsonl, .csv)
  deepresearch runs feedback 3f2a --score 1 --comment "right answer"
  deepresearch runs repair                              (moves a damaged store aside, kept)
A unique prefix of a run id is enough.""")


def _store() -> TraceStore:
    return TraceStore(get_settings().paths.traces_db)


def parse_since(value: str | None) -> datetime | None:
    """'2026-11-01', '2026-11-01T12:00', or a relative '3d' / '12h' / '30m'."""
    if value is None:
        return None
    units = {"d": "days", "h": "hours", "m": "minutes"}
    if value[-1:] in units and value[:-1].isdigit():
        return datetime.now(UTC) - timedelta(**{units[value[-1]]: int(value[:-1])})
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise fail(f"--since: '{value}' is not a date (2026-11-01) or an age (3d, 12h, 30m)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@runs_app.command("list")
def list_runs(
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="newest N runs"),
    since: str | None = typer.Option(None, help="only runs since a date or age (3d, 12h)"),
    status: str | None = typer.Option(None, help="finished | budget_stop | loop_stop | error | running"),
) -> None:
    """List runs, newest first: id, start, status, time, tokens, verified/all citations, question."""
    runs = _store().list_runs(limit=limit, since=parse_since(since), status=status)
    if not runs:
        out.print("no runs yet — try: deepresearch ask \"your question\"")
        return
    # The id whole, however narrow the terminal: it is what `runs show` and `ask --resume` take.
    table = Table(Column("id", no_wrap=True, min_width=max(len(r.id) for r in runs)), "created", "status", "time",
                  "tokens", "cites", "question")
    for r in runs:
        verified = sum(1 for c in r.citations if c.get("verified"))
        table.add_row(
            r.id, r.created_at.strftime("%Y-%m-%d %H:%M"), r.status,
            f"{r.duration_s:.0f}s" if r.duration_s is not None else "-",
            str(r.usage.get("llm_tokens", "-")), f"{verified}/{len(r.citations)}", r.question[:70],
        )
    out.print(table)


@runs_app.command("show")
def show(
    run_id: str = typer.Argument(..., help="run id (a unique prefix is enough)"),
    events: bool = typer.Option(False, "--events", help="list every logged event"),
    as_json: bool = typer.Option(False, "--json", help="print the run as JSON, with its events (= --format json)"),
    fmt: str | None = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    out_file: Path | None = typer.Option(None, "--out", "-o", help="write the report to this file (its suffix "
                                         "picks the format: .md .html .pdf .json)"),
) -> None:
    """Show a run: its report, usage and feedback; or export the report (--format md|html|pdf|json --out FILE)."""
    try:
        chosen = choose_format(fmt, out_file, as_json=as_json)
        check_out(out_file)
    except ExportInputError as exc:
        raise fail(str(exc)) from None
    if events and chosen is not None:
        raise fail("--events lists a run's events on the terminal; leave out --format/--out/--json")
    store = _store()
    try:
        run = store.get_run(run_id)
    except RunNotFound as exc:
        raise fail(str(exc)) from None
    if chosen is not None:
        _export_report(store, run, chosen, out_file)
        return
    out.print(f"[bold]{escape(run.question)}[/]\nrun {run.id} · {run.status} · {run.created_at:%Y-%m-%d %H:%M:%S}")
    out.print(f"usage: {json.dumps(run.usage)}", markup=False)
    if run.report:
        out.print(run.report, markup=False)
    for fb in run.feedback:
        out.print(f"feedback: {fb['score']} {fb.get('comment') or ''}", markup=False)
    if events:
        for ev in store.events(run.id):
            out.print(f"{ev.seq:4d} {ev.kind:8s} {_event_summary(ev.kind, ev.payload)}", markup=False)


def _export_report(store: TraceStore, run: RunRecord, fmt: str, out_file: Path | None) -> None:
    from ..report_pdf import PdfError
    from ..report_view import view_of_run

    if fmt == "json":
        data = (trace_export.collect(store, [run.id])[0].model_dump_json(indent=2) + "\n").encode("utf-8")
    elif not run.report:
        raise fail(f"run {run.id} has no report ({run.status}); --format json exports what it has")
    else:
        try:
            data = render_report(view_of_run(run), fmt, get_settings().tools.browser)
        except PdfError as exc:
            raise fail(str(exc), code=1) from None
    if out_file is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    write_output(out_file, data)
    err.print(f"wrote {out_file}", markup=False, highlight=False)


def _event_summary(kind: str, p: dict) -> str:
    if kind == "llm":
        return f"{p.get('role')} {len(p.get('prompt_token_ids', []))}+{len(p.get('completion_token_ids', []))} tok"
    if kind == "tool":
        status = f"ERROR {p['error']}" if p.get("error") else "ok"
        return f"{p.get('tool')} {json.dumps(p.get('input'))[:80]} {status}"
    return json.dumps(p)[:120]


EXPORT_WRITERS = {".jsonl": "write_jsonl", ".parquet": "write_parquet", ".csv": "write_csv"}


@runs_app.command("export")
def export(
    path: Path = typer.Argument(..., help="output file: .jsonl (everything), .parquet (typed columns) or .csv "
                                          "(one flat row per run)"),
    run_ids: list[str] = typer.Option([], "--run", help="run id to export (repeatable; default all)"),
    since: str | None = typer.Option(None, help="only runs since a date or age (3d, 12h)"),
) -> None:
    """Export runs with their events (JSONL, Parquet) or as a spreadsheet (CSV)."""
    suffix = path.suffix.lower()
    if suffix not in EXPORT_WRITERS:
        raise fail(f"{path}: export format must be .jsonl, .parquet or .csv")
    if not path.parent.exists():
        raise fail(f"{path.parent}: directory does not exist")
    if path.is_dir():
        raise fail(f"{path} is a directory; give a file name")
    store = _store()
    ids = run_ids or [r.id for r in store.list_runs(limit=None, since=parse_since(since))]
    try:
        runs = trace_export.collect(store, ids)
    except RunNotFound as exc:
        raise fail(str(exc)) from None
    writer = getattr(trace_export, EXPORT_WRITERS[suffix])
    n = write_output(path, lambda fh: writer(runs, fh))  # a failed export leaves no half-written file
    out.print(f"exported {n} run(s) to {path}", markup=False, highlight=False)


@runs_app.command("repair")
def repair(
    force: bool = typer.Option(False, "--force", help="move the trace store aside even if it passes the check"),
) -> None:
    """Check every store of the data dir (runs, checkpoints, search cache, indexes, memory); move a damaged
    one aside (kept for recovery) so that a new one starts."""
    from ..data_stores import data_stores

    for store in data_stores(get_settings()):
        if store.folder is not None and not store.folder.exists():
            continue  # moved aside with its folder's other store
        if not store.path.exists():
            out.print(f"no {store.what} at {store.path}; nothing to repair", markup=False, highlight=False)
            continue
        problem = store.problem()
        forced = force and store.what == "trace store"
        if problem is None and not forced:
            out.print(f"{store.what} {store.path} passes SQLite's integrity check; nothing to do", markup=False,
                      highlight=False)
            continue
        moved = store.move_aside()
        damaged_file = moved if store.folder is None else moved / store.path.relative_to(store.folder)
        salvage = f"sqlite3 {damaged_file} .recover | sqlite3 recovered.db"
        out.print(f"moved the {store.what} to {moved} ({problem or 'forced'}); {store.after}. "
                  f"Salvage it with: {salvage}", markup=False, highlight=False)


@runs_app.command("feedback")
def feedback(
    run_id: str = typer.Argument(..., help="run id (a unique prefix is enough)"),
    score: float = typer.Option(..., "--score", min=-1.0, max=1.0, help="-1 (bad) … 1 (good)"),
    comment: str | None = typer.Option(None, "--comment", help="what was right or wrong"),
) -> None:
    """Rate a run from -1 (bad) to 1 (good); `deepresearch train --from-runs` learns from ratings."""
    from ..feedback import record_feedback

    store = _store()
    try:
        run = store.get_run(run_id)
        forgotten = record_feedback(store, get_settings().tools, run.id, score, comment)
    except RunNotFound as exc:
        raise fail(str(exc)) from None
    out.print(f"feedback recorded for run {run.id}; `deepresearch train --from-runs` will use it")
    if forgotten:
        out.print(f"forgot the {forgotten} finding(s) this run had put into memory")


def register(app: typer.Typer) -> None:
    app.add_typer(runs_app, name="runs")
