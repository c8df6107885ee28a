"""`deepresearch eval …`: run systems on a QA set; `eval compare A B`; `eval report DIR`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from deepresearch.app.console import dataset_paths, err, fail, out
from deepresearch.app.file_output import write_output
from deepresearch.app.settings import get_settings

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.model.policy import AdapterChoice
    from deepresearch.app.settings import Settings
    from deepresearch.evals.config import EvalSettings
    from deepresearch.evals.run.runner import EvalPlan
    from deepresearch.evals.scoring.aggregate import EvalSummary

eval_app = typer.Typer(
    help="Benchmark systems (closed-book, retrieve, agent-loop, graph, reader) on a QA set with its corpus.",
    invoke_without_command=True,
    epilog="""Examples:
  deepresearch eval --dataset demo --split dev --limit 20 --system closed-book,graph --out out/base
  deepresearch eval --questions qa.jsonl --corpus corpus.jsonl --split dev --limit 50 --system graph --out out/base
  deepresearch eval --questions qa.jsonl --corpus corpus.jsonl --system closed-book,retrieve,graph --out out/all
  deepresearch eval --questions my-questions.jsonl --docs ~/notes --system graph --out out/notes
  deepresearch eval --questions my-questions.jsonl --docs ~/notes --system reader --out out/notes-reader
  deepresearch eval compare out/base out/trained
  deepresearch eval report out/base
  deepresearch eval unanswerable --questions qa.jsonl --corpus corpus.jsonl --split dev --limit 40 --out out/unans
  deepresearch eval rephrase --questions my-questions.jsonl --as request --out out/asked.jsonl
  deepresearch eval rephrase --dataset demo --as thanks --limit 50 --out out/thanks.jsonl
Dataset format: docs/evals.md. A killed eval resumes where it stopped (same --out).""",
)

SUMMARY_ROWS = ("em", "f1", "citation_precision", "citation_recall", "verified_share", "found_in_evidence",
                "tool_calls", "llm_tokens", "wall_s", "error")


def _eval_settings(seed: int | None, concurrency: int | None) -> EvalSettings:
    base = get_settings().eval  # [eval] in config.toml / DEEPRESEARCH_EVAL__*
    update = {k: v for k, v in {"seed": seed, "concurrency": concurrency}.items() if v is not None}
    return base.model_copy(update=update)


def _systems(values: list[str]) -> list[str]:
    """`--system a --system b` and `--system a,b` both work."""
    return [s.strip() for v in values for s in v.split(",") if s.strip()]


def _adapter_path(adapter: str | None, adapters_dir: Path) -> tuple[str | None, Path | None]:
    """(name, folder to load it from, or None when the model server should already know it)."""
    if adapter is None:
        return None, None
    as_path = Path(adapter)
    if as_path.is_dir():
        return as_path.name, as_path
    if (adapters_dir / adapter).is_dir():
        return adapter, adapters_dir / adapter
    return adapter, None


def answering_adapter(flag: str | None, settings: Settings) -> tuple[str | None, Path | None, AdapterChoice]:
    """Which weights an eval answers with: --adapter (a name, a folder, or 'base'), else the configured adapter,
    else the served one (the registry's current: what `deepresearch train` last published), as for `ask`.
    Returns the adapter's name and folder (None: nothing to load) and the choice, scoped to its roles."""
    from deepresearch.agent.model.policy import AdapterChoice, AdapterMode
    from deepresearch.train.adapters.registry import adapter_choice

    from ..runtime import with_served_adapter

    requested = flag or with_served_adapter(settings).model.adapter
    if requested in (AdapterMode.BASE, ""):  # as `adapters use base`: the plain model, whatever is served
        return None, None, AdapterChoice.base()
    adapters_dir = settings.paths.adapters
    name, folder = _adapter_path(requested, adapters_dir)
    if not name:
        return None, None, AdapterChoice.active()  # no adapter anywhere: what the model serves
    return name, folder, adapter_choice(name, folder or adapters_dir / name)  # scoped to the roles it was trained for


async def _load_adapter(model: ChatModel, name: str, path: Path | None, adapters_dir: Path) -> None:
    if name in model.adapters():
        return
    if path is None:
        raise fail(
            f"--adapter: '{name}' is neither loaded in the model ({', '.join(model.adapters()) or 'none loaded'}) "
            f"nor a folder under {adapters_dir}"
        )
    await model.load_adapter(name, path)


def _print_summary(summary: EvalSummary) -> None:
    from deepresearch.evals.reports.report import DIGITS, METRIC_LABELS, format_ci
    from rich.table import Table

    table = Table("metric", *summary.systems, title=f"{summary.eval_id} (mean [95 % CI])")
    table.add_row("questions", *(str(s.n) for s in summary.systems.values()))
    for metric in SUMMARY_ROWS:
        table.add_row(METRIC_LABELS[metric], *(
            format_ci(summary.metric(s, metric), DIGITS.get(metric, 3)) for s in summary.systems
        ))
    out.print(table)


@eval_app.callback()
def run(
    ctx: typer.Context,
    questions: Path | None = typer.Option(None, "--questions", help="questions.jsonl (see docs/evals.md)"),
    corpus: Path | None = typer.Option(None, "--corpus", help="corpus.jsonl; indexed and served locally for the run"),
    dataset: str | None = typer.Option(None, "--dataset", help="a bundled QA set with its corpus, instead of "
                                       "--questions/--corpus: demo"),
    docs: Path | None = typer.Option(None, "--docs", help="a folder of your documents (md, txt, html, pdf, csv) as "
                                     "the corpus, instead of --corpus; gold_doc_ids are file paths inside it"),
    index: str | None = typer.Option(None, "--index", help="a built local index as the corpus, instead of --corpus"),
    system: list[str] = typer.Option(
        [], "--system", help="closed-book | retrieve | agent-loop | graph | reader (repeat, or comma-separate)"
    ),
    out_dir: Path | None = typer.Option(None, "--out", help="results, report and plots go here (resumable)"),
    limit: int | None = typer.Option(None, "--limit", help="only the first N questions (seeded order)"),
    split: str | None = typer.Option(None, "--split", help="only questions of this split, e.g. dev"),
    adapter: str | None = typer.Option(None, "--adapter", help="LoRA adapter name (or folder) to answer with; "
                                       "'base' = the base model (default: the served adapter, if any)"),
    seed: int | None = typer.Option(None, "--seed", help="question order, sampling and bootstrap seed "
                                       "(default from settings: {settings.eval.seed})"),
    concurrency: int | None = typer.Option(None, "--concurrency", help="questions answered at once "
                                              "(default from settings: {settings.eval.concurrency})"),
    temperature: float | None = typer.Option(None, "--temperature", help="sampling temperature "
                                                "(default from settings: {settings.model.temperature})"),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="re-run questions whose result was an error"),
    plots: bool = typer.Option(True, "--plots/--no-plots", help="write PNG plots"),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="show the progress bar"),
) -> None:
    """Run an eval: `deepresearch eval --questions Q --corpus C --system graph --out DIR`."""
    if ctx.invoked_subcommand is not None:
        return
    from deepresearch.evals.data.dataset import DatasetError
    from deepresearch.evals.run.runner import EvalError, plan_eval

    if dataset is not None:
        questions, corpus = dataset_paths(dataset, questions, corpus)
    if questions is None:
        raise fail("--questions FILE or --dataset NAME is required (or use `deepresearch eval compare A B`)")
    if out_dir is None:
        raise fail("--out DIR is required (results are written and resumed there)")
    if sum(x is not None for x in (corpus, docs, index)) > 1:
        raise fail("give one corpus: --corpus FILE, --docs FOLDER or --index NAME")
    if docs is not None or index is not None:
        corpus = _corpus_of(docs, index, out_dir)
    systems = _systems(system)
    if not systems:
        raise fail("--system is required: closed-book, retrieve, agent-loop, graph or reader")
    if concurrency is not None and concurrency < 1:
        raise fail(f"--concurrency must be at least 1 (got {concurrency})")
    if temperature is not None and not 0.0 <= temperature <= 5.0:
        raise fail(f"--temperature must be between 0 and 5 (got {temperature})")
    settings = get_settings()
    evals = _eval_settings(seed, concurrency)
    temp = settings.model.temperature if temperature is None else temperature
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.evals.run.runner import EvalSelection

    adapter_name, adapter_dir, answering = answering_adapter(adapter, settings)
    policy = RunPolicy(adapter=answering, temperature=temp, max_tokens=settings.model.max_tokens)
    try:
        plan = plan_eval(EvalSelection(questions=questions, corpus=corpus, split=split, limit=limit), systems=systems,
                         out_dir=out_dir, model_name=settings.model.name, seed=evals.seed, policy=policy,
                         agent=settings.agent)
    except (EvalError, DatasetError) as exc:
        raise fail(str(exc)) from None
    err.print(
        f"eval {plan.manifest.eval_id}: {len(plan.questions)} questions × {', '.join(plan.systems)} → {out_dir}",
        markup=False, highlight=False,
    )
    summary = asyncio.run(_execute(plan, settings, evals, adapter_name, adapter_dir, retry_errors, progress))
    _print_summary(summary)
    from deepresearch.evals.reports.report import write_report

    paths = write_report(out_dir, evals, plots=plots)
    out.print(f"report: {paths.markdown}")
    for plot in paths.plots:
        out.print(f"plot:   {plot}")


def _corpus_of(docs: Path | None, index: str | None, out_dir: Path) -> Path:
    """--docs / --index as a corpus.jsonl in the eval's directory (docs/evals.md, "Your own documents")."""
    from deepresearch.evals.data.dataset import DatasetError
    from deepresearch.evals.data.docs_corpus import CORPUS_FILE, corpus_from_folder, corpus_from_index

    settings = get_settings()
    try:
        if docs is not None:
            path, skipped = corpus_from_folder(docs, out_dir / CORPUS_FILE,
                                               max_file_bytes=settings.tools.index.max_file_bytes)
            for reason in skipped:
                err.print(f"skipped: {reason}", markup=False, highlight=False)
            return path
        from deepresearch.tools.index.registry import IndexRegistry
        from deepresearch.tools.index.store import IndexNotFound

        registry = IndexRegistry(settings.tools)
        try:
            return corpus_from_index(registry.open(str(index)), str(index), out_dir / CORPUS_FILE)
        except (IndexNotFound, ValueError) as exc:
            raise fail(f"--index: {exc}") from None
        finally:
            registry.close()
    except DatasetError as exc:
        raise fail(str(exc)) from None


async def _execute(
    plan: EvalPlan, settings: Settings, evals: EvalSettings, adapter_name: str | None, adapter_dir: Path | None,
    retry_errors: bool, progress: bool,
) -> EvalSummary:
    from deepresearch.agent.model.base import ModelError
    from deepresearch.agent.model.factory import build_model
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.evals.run.runner import EvalError, EvalRuntime, execute_eval

    try:
        model = build_model(settings.model, cache_dir=settings.cache_dir, adapters_dir=settings.paths.adapters)
    except ModelError as exc:
        raise fail(f"model: {exc}") from None
    try:
        if adapter_name:
            await _load_adapter(model, adapter_name, adapter_dir, settings.paths.adapters)
        store = TraceStore(settings.paths.traces_db)
        try:
            runtime = EvalRuntime(model=model, store=store, agent=settings.agent, tools=settings.tools, evals=evals)
            return await execute_eval(plan, runtime, progress=progress, retry_errors=retry_errors)
        except EvalError as exc:
            raise fail(str(exc)) from None
        finally:
            store.close()
    finally:
        await model.close()


@eval_app.command("compare")
def compare(
    a: Path = typer.Argument(..., help="eval --out directory A (e.g. the base model)"),
    b: Path = typer.Argument(..., help="eval --out directory B (e.g. a new adapter)"),
    out_file: Path | None = typer.Option(None, "--out", help="also write the comparison here (.md or .json)"),
    max_flips: int = typer.Option(30, "--max-flips", help="flipped questions listed per system"),
    systems: str | None = typer.Option(
        None, "--systems", help="SYS_A:SYS_B — compare system SYS_A of A with SYS_B of B "
        "(e.g. closed-book:graph; A and B may be the same directory)"),
) -> None:
    """B − A per metric with paired bootstrap intervals, and the questions whose answer flipped."""
    from deepresearch.evals.reports.compare import compare_dirs, render_comparison

    for path in (a, b):
        if not path.is_dir():
            raise fail(f"{path}: not an eval directory (give the --out of two evals)")
    pair: tuple[str, str] | None = None
    if systems is not None:
        parts = [p.strip() for p in systems.split(":")]
        if len(parts) != 2 or not all(parts):
            raise fail(f"--systems {systems!r}: expected SYS_A:SYS_B, e.g. closed-book:graph")
        pair = (parts[0], parts[1])
    evals = _eval_settings(None, None)
    try:
        comparison = compare_dirs(a, b, seed=evals.seed, resamples=evals.bootstrap_resamples,
                                  confidence=evals.confidence, systems=pair)
    except ValueError as exc:
        raise fail(str(exc)) from None
    text = render_comparison(comparison, max_flips=max_flips)
    out.print(text, markup=False, highlight=False)
    if out_file is not None:
        body = comparison.model_dump_json(indent=2) if out_file.suffix == ".json" else text
        write_output(out_file, body.encode("utf-8"))


@eval_app.command("unanswerable")
def unanswerable(
    questions: Path = typer.Option(..., "--questions", help="an answerable questions.jsonl"),
    corpus: Path = typer.Option(..., "--corpus", help="its corpus.jsonl"),
    out_dir: Path = typer.Option(..., "--out", help="writes questions.jsonl and corpus.jsonl here"),
    split: str | None = typer.Option(None, "--split", help="only questions of this split, e.g. train or dev"),
    limit: int = typer.Option(40, "--limit", help="questions to make unanswerable"),
    seed: int = typer.Option(0, "--seed", help="question order"),
) -> None:
    """Make unanswerable questions: each one's answer taken out of the corpus, gold answer "not found"."""
    from deepresearch.evals.data.dataset import DatasetError
    from deepresearch.evals.data.unanswerable import make_unanswerable

    if limit < 1:
        raise fail(f"--limit must be at least 1 (got {limit})")
    try:
        made = make_unanswerable(questions, corpus, out_dir, split=split, limit=limit, seed=seed)
    except DatasetError as exc:
        raise fail(str(exc)) from None
    out.print(f"{made.kept} unanswerable questions ({made.skipped} skipped), {made.removed_docs} documents taken "
              f"out: {made.questions}, {made.corpus}", markup=False, highlight=False)


@eval_app.command("rephrase")
def rephrase(
    questions: Path | None = typer.Option(None, "--questions", help="a questions.jsonl"),
    dataset: str | None = typer.Option(None, "--dataset", help="a bundled QA set instead of --questions: demo"),
    out_file: Path = typer.Option(..., "--out", help="writes the rephrased questions.jsonl here"),
    phrasing: str = typer.Option(..., "--as", help="request, imperative, thanks, reason, lowercase or keywords"),
    limit: int | None = typer.Option(None, "--limit", help="only the first N questions of the file"),
) -> None:
    """Ask a question set the way people ask ("Do you know what … is?", "… Thanks!"): same ids, golds and documents,
    so `eval compare` pairs a run on it with a run on the set as written."""
    from deepresearch.evals.data.dataset import DatasetError
    from deepresearch.evals.data.rephrase import rephrase as rephrase_set

    corpus = None
    if dataset is not None:
        questions, corpus = dataset_paths(dataset, questions, None)
    if questions is None:
        raise fail("--questions FILE or --dataset NAME is required")
    if limit is not None and limit < 1:
        raise fail(f"--limit must be at least 1 (got {limit})")
    try:
        made = rephrase_set(questions, out_file, phrasing, limit=limit)
    except DatasetError as exc:
        raise fail(str(exc)) from None
    out.print(f"{made.kept} questions asked as {made.phrasing} ({made.skipped} of another shape left out): "
              f"{made.questions}", markup=False, highlight=False)
    if corpus is not None:
        out.print(f"its corpus: {corpus}", markup=False, highlight=False)


@eval_app.command("report")
def report(
    directory: Path = typer.Argument(..., help="an eval --out directory"),
    plots: bool = typer.Option(True, "--plots/--no-plots"),
    rescore: bool = typer.Option(False, "--rescore", help="score every result again from its output with today's "
                                 "metrics first (for an eval written before a metric existed)"),
) -> None:
    """Rebuild summary.json, report.md and the plots of an eval directory (finished or not)."""
    from deepresearch.evals.reports.report import write_report
    from deepresearch.evals.run.results_file import ResultsFile

    if not directory.is_dir():
        raise fail(f"{directory}: not an eval directory")
    try:
        if rescore:
            out.print(f"rescored {ResultsFile(directory).rescore()} results")
        paths = write_report(directory, _eval_settings(None, None), plots=plots)
    except ValueError as exc:
        raise fail(str(exc)) from None
    out.print(f"report: {paths.markdown}")
    for plot in paths.plots:
        out.print(f"plot:   {plot}")


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
