"""Run systems over questions: concurrent, resumable, deterministic, with a progress bar.

Entry points:

    await run_eval(EvalSelection(questions=PATH, corpus=PATH), EvalRuntime(model, store, agent, tools),
                   systems=[...], out_dir=..., policy=RunPolicy(...))
        = plan_eval (loads and checks the files and the out dir, no model needed; the CLI calls it
        first so bad input fails fast) + execute_eval (indexes the corpus and serves it on the
        local web for the run, answers every (system, question) not yet in out_dir/results.jsonl,
        writes summary.json and returns the `EvalSummary` — what the trainer's publish gate reads).

    await run_questions(questions, systems, context=..., out_dir=...)
        the loop itself, for callers that bring their own tools.

Every result is appended to results.jsonl as it finishes, so a killed eval continues where it
stopped: finished (system, question) pairs are never run twice and none are lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import (
    CorpusDoc,
    EvalQuestion,
    check_gold_ids,
    load_corpus,
    load_questions,
    select_questions,
)
from deepresearch.evals.data.docs_corpus import resolve_gold_ids
from deepresearch.evals.reports.report import summarize_dir
from deepresearch.evals.run.manifest import EvalManifest, EvalMismatch, changed_settings, file_sha256, open_manifest
from deepresearch.evals.run.results import QuestionResult, make_result
from deepresearch.evals.run.results_file import ResultsFile
from deepresearch.evals.run.systems import SYSTEM_NAMES, TOOL_FREE_SYSTEMS, SystemContext, get_system
from deepresearch.evals.scoring.aggregate import EvalSummary
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings


class EvalError(ValueError):
    """Bad eval input (one line, shown to the user)."""


def _check_systems(systems: Sequence[str]) -> list[str]:
    if not systems:
        raise EvalError("no system given (choose from " + ", ".join(SYSTEM_NAMES) + ")")
    unknown = [s for s in systems if s not in SYSTEM_NAMES]
    if unknown:
        raise EvalError(f"unknown system '{unknown[0]}' (choose from {', '.join(SYSTEM_NAMES)})")
    return list(dict.fromkeys(systems))


async def run_questions(
    questions: Sequence[EvalQuestion], systems: Sequence[str], *, context: SystemContext, out_dir: Path,
    concurrency: int = 4, progress: bool = True, retry_errors: bool = False,
) -> list[QuestionResult]:
    """Answer each (system, question) pair not already in out_dir/results.jsonl; return all results.

    Work is ordered question-major (each question through every system) so a partial eval
    covers all systems; at most `concurrency` pairs run at once and the model batches them.
    """
    systems = _check_systems(systems)
    out_dir.mkdir(parents=True, exist_ok=True)
    results_file = ResultsFile(out_dir)
    done = {r.key: r for r in results_file.load(drop_errors=retry_errors)}
    pending = [(s, q) for q in questions for s in systems if (s, q.id) not in done]
    queue: asyncio.Queue[tuple[str, EvalQuestion]] = asyncio.Queue()
    for item in pending:
        queue.put_nowait(item)

    columns = (TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # stderr, so stdout stays clean for the summary table
    with Progress(*columns, console=Console(stderr=True), disable=not progress, transient=False) as bar:
        tasks = {
            s: bar.add_task(s, total=len(questions), completed=sum((s, q.id) in done for q in questions))
            for s in systems
        }

        async def worker() -> None:
            while True:
                try:
                    system, question = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                output = await get_system(system)(question, context)
                result = make_result(context.eval_id, system, question, output)
                results_file.append(result)  # durable before it counts as done
                done[result.key] = result
                bar.advance(tasks[system])

        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(pending))))))

    wanted = {(s, q.id) for q in questions for s in systems}
    return [r for key, r in done.items() if key in wanted]


@dataclass(frozen=True)
class EvalSelection:
    """Which questions an eval answers: the files, and the split and number of questions to take."""

    questions: Path
    corpus: Path | None = None
    split: str | None = None
    limit: int | None = None


@dataclass(frozen=True)
class EvalRuntime:
    """What an eval runs on: the model, the trace store and the settings of the agent, tools and evals."""

    model: ChatModel
    store: TraceStore
    agent: AgentSettings
    tools: ToolSettings | None = None
    evals: EvalSettings = field(default_factory=EvalSettings)


@dataclass
class EvalPlan:
    """A checked eval, ready to run: what `plan_eval` returns and `execute_eval` takes."""

    questions: list[EvalQuestion]
    systems: list[str]
    corpus: Path | None
    docs: list[CorpusDoc] | None
    out_dir: Path
    manifest: EvalManifest
    policy: RunPolicy = RunPolicy()

    @property
    def needs_tools(self) -> bool:
        return any(s not in TOOL_FREE_SYSTEMS for s in self.systems)


def plan_eval(
    selection: EvalSelection, *, systems: Sequence[str], out_dir: Path, model_name: str, seed: int = 0,
    policy: RunPolicy = RunPolicy(), agent: AgentSettings | None = None,
) -> EvalPlan:
    """Check every input (files, systems, out dir) before any model is loaded; raise EvalError/DatasetError.
    `seed` orders the questions; `policy` is how every system decodes (its adapter and temperature are
    part of the manifest: a resumed eval must be the same eval), as are `agent`'s settings that differ from the
    defaults."""
    questions, corpus, split, limit = selection.questions, selection.corpus, selection.split, selection.limit
    systems = _check_systems(systems)
    tool_systems = [s for s in systems if s not in TOOL_FREE_SYSTEMS]
    if tool_systems and corpus is None:
        raise EvalError(f"system '{tool_systems[0]}' searches a corpus: give --corpus FILE")
    if limit is not None and limit < 1:
        raise EvalError(f"--limit must be at least 1 (got {limit})")
    if out_dir.exists() and not out_dir.is_dir():
        raise EvalError(f"--out {out_dir} is a file, not a directory")
    all_questions = load_questions(questions)
    docs = load_corpus(corpus) if corpus is not None else None
    if docs is not None:
        all_questions = resolve_gold_ids(all_questions, {d.id for d in docs})
        check_gold_ids(all_questions, {d.id for d in docs}, questions)
    chosen = select_questions(all_questions, split=split, limit=limit, seed=seed)
    wanted = EvalManifest(
        questions_path=str(questions), questions_sha256=file_sha256(questions),
        corpus_path=str(corpus) if corpus else None, corpus_sha256=file_sha256(corpus), split=split,
        limit=limit, seed=seed, systems=systems, adapter=policy.adapter.label, model=model_name,
        temperature=policy.temperature, question_ids=[q.id for q in chosen],
        agent_changes=changed_settings(agent, AgentSettings()) if agent is not None else {},
    )
    try:
        manifest = open_manifest(out_dir, wanted)
    except EvalMismatch as exc:
        raise EvalError(str(exc)) from None
    return EvalPlan(questions=chosen, systems=systems, corpus=corpus, docs=docs, out_dir=out_dir, manifest=manifest,
                    policy=policy)


async def execute_eval(
    plan: EvalPlan, runtime: EvalRuntime, *, progress: bool = True, retry_errors: bool = False,
) -> EvalSummary:
    """Run a plan: corpus indexed and served for the run, then every pending (system, question)."""
    from deepresearch.evals.run.environment import eval_environment

    model, evals = runtime.model, runtime.evals
    adapter = plan.manifest.adapter
    if adapter is not None and adapter not in model.adapters():
        raise EvalError(f"adapter '{adapter}' is not loaded in the model (loaded: {model.adapters() or 'none'})")
    if plan.needs_tools and runtime.tools is None:
        raise EvalError("tool settings are required for systems that search")
    corpus = plan.corpus if plan.needs_tools else None
    async with eval_environment(corpus, plan.docs, runtime.tools, use_memory=evals.use_memory) as eval_tools:
        context = SystemContext(
            model=model, store=runtime.store, agent=runtime.agent, evals=evals, eval_id=plan.manifest.eval_id,
            policy=plan.policy, tools=eval_tools,
        )
        await run_questions(
            plan.questions, plan.systems, context=context, out_dir=plan.out_dir, concurrency=evals.concurrency,
            progress=progress, retry_errors=retry_errors,
        )
    # Every system in the directory for the current selection, so the returned summary and
    # summary.json agree (systems run by earlier invocations into the same --out included).
    return summarize_dir(plan.out_dir, evals)


async def run_eval(
    selection: EvalSelection, runtime: EvalRuntime, *, systems: Sequence[str], out_dir: Path,
    policy: RunPolicy = RunPolicy(), progress: bool = True, retry_errors: bool = False,
) -> EvalSummary:
    """Plan and execute an eval in one call (what the trainer's publish gate uses)."""
    plan = plan_eval(selection, systems=systems, out_dir=out_dir, model_name=runtime.model.model_name,
                     seed=runtime.evals.seed, policy=policy, agent=runtime.agent)
    return await execute_eval(plan, runtime, progress=progress, retry_errors=retry_errors)
