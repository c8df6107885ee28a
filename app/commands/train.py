"""`deepresearch train`: improve the model from questions — a QA file, or what people asked.

    deepresearch train --questions pool/questions.jsonl --corpus pool/corpus.jsonl --group-size 8 --rounds 3
    deepresearch train --from-runs --since 7d --index mydocs --rounds 1
    deepresearch train --from-runs --watch --index mydocs          # keeps improving as runs and feedback arrive
    deepresearch train --index mydocs --rounds 4                   # questions synthesized from the documents

Each round: rollout (every question G times through the real graph) → score (rewards, advantages)
→ update (GRPO on a LoRA adapter) → eval (dev set through the evals runner) → publish if no regression.
"""

from __future__ import annotations

import asyncio
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from deepresearch.app.console import err, fail, out
from deepresearch.app.settings import get_settings

from .train_inputs import (
    apply_overrides,
    base_model_dir,
    check_index,
    check_inputs,
    load_questions,
    resolve_dev_set,
)

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.app.settings import Settings
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.rounds.questions import TrainQuestion
    from deepresearch.train.rounds.replay import ReplayToolboxes
    from deepresearch.train.synth.feed import RunSourcesFeed

PHASES = ("rollout", "score", "update", "eval")


@dataclass(frozen=True)
class TrainJob:
    """What one `train` invocation was asked to do, resolved and checked from its options."""

    items: list[TrainQuestion] | None  # the QA file's or the synthesized questions; None: the questions people asked
    since: datetime | None  # with --from-runs: only runs since then
    corpus: Path | None  # served as the local web, or
    index: str | None  # an existing index served as the local web (None with --corpus or a replay)
    dev: Any  # the publish gate's dev set (None: --no-gate)
    rounds: int  # the total (0 with --watch: until stopped)
    watch: bool
    resume: bool
    export_dir: Path | None  # --export-samples
    replay: bool  # logged questions searched as their runs searched (train/rounds/replay.py)
    hours: float | None  # bound on this invocation
    synthesized: dict[str, dict[str, int]] | None = None  # questions synthesized from documents: made / kept by kind


class RichPhases:
    """One progress bar per phase (rollout, score, update, eval), reset every round."""

    def __init__(self, progress: Any):
        self.progress = progress
        self.tasks = {p: progress.add_task(p, total=None, visible=False) for p in PHASES}

    def start(self, phase: str, total: int):
        task = self.tasks[phase]
        self.progress.reset(task, total=max(total, 1), completed=0, visible=True)
        return lambda n=1: self.progress.advance(task, n)


def train(
    ctx: typer.Context,
    questions: Path | None = typer.Option(None, "--questions", help="QA jsonl: question, answer, gold_doc_ids …"),
    dataset: str | None = typer.Option(None, "--dataset", help="a bundled QA set with its corpus, instead of "
                                       "--questions/--corpus: demo"),
    from_runs: bool = typer.Option(False, "--from-runs", help="replay questions people asked (logged runs)"),
    since: str | None = typer.Option(None, "--since", help="with --from-runs: runs since a date or age (7d, 12h)"),
    split: str | None = typer.Option("train", "--split", help="with --questions: only this split ('' = all)"),
    corpus: Path | None = typer.Option(None, "--corpus", help="corpus jsonl: indexed and served as the local web; "
                                       "without --questions (or a folder of documents): questions are synthesized "
                                       "from it"),
    index: str | None = typer.Option(None, "--index", help="an existing local index to serve as the local web; "
                                     "without --questions or --from-runs: questions are synthesized from it"),
    group_size: int | None = typer.Option(None, "--group-size", "-G", help="runs per question (default from settings: "
                                            "{settings.train.grpo.num_generations})"),
    rounds: int | None = typer.Option(None, "--rounds", help="training rounds (default 1; with --watch 0, "
                                      "which trains until stopped)"),
    per_round: int | None = typer.Option(None, "--questions-per-round", help="questions per round (default from "
                                         "settings: {settings.train.rollout.questions_per_round})"),
    temperature: float | None = typer.Option(None, "--temperature", help="rollout sampling temperature (default "
                                                "from settings: {settings.train.grpo.temperature})"),
    train_roles: str | None = typer.Option(None, "--train-roles", help="train only these roles, e.g. planner,writer "
                                           "or answer (the answer re-ranker's choice; the adapter answers only "
                                           "for them; default: every role)"),
    dev: Path | None = typer.Option(None, "--dev", help="dev QA jsonl for the eval gate (default: --questions)"),
    dev_corpus: Path | None = typer.Option(None, "--dev-corpus", help="corpus jsonl the gate's dev set is "
                                           "evaluated on (default: --corpus); with --from-runs it leaves the "
                                           "replays searching as the logged runs did"),
    dev_split: str | None = typer.Option("dev", "--dev-split", help="split of the dev file ('' = all)"),
    dev_size: int | None = typer.Option(None, "--dev-size", help="dev questions per gate eval (default from "
                                            "settings: {settings.train.publish.dev_size})"),
    no_gate: bool = typer.Option(False, "--no-gate", help="publish every adapter without the eval gate"),
    watch: bool = typer.Option(False, "--watch", help="keep training as new runs and feedback arrive"),
    resume: bool = typer.Option(False, "--resume", help="continue after the last round the trainer's checkpoint "
                                "committed (same questions and settings; --rounds is the total)"),
    hours: float | None = typer.Option(None, "--hours", help="bound this invocation: start no round the time left "
                                       "cannot fit (judged by the longest round so far); --resume continues"),
    launcher: str | None = typer.Option(None, "--launcher", help="inprocess | accelerate (default from settings: "
                                          "{settings.train.launch.launcher})"),
    accelerate_config: str | None = typer.Option(None, "--accelerate-config", help="ddp | fsdp | zero2 | zero3 | yaml"),
    num_processes: int | None = typer.Option(None, "--num-processes", help="processes for --launcher accelerate"),
    export_samples: Path | None = typer.Option(None, "--export-samples", help="also write each round's samples "
                                               "here as Parquet in verl's layout (round-NNNN.parquet)"),
) -> None:
    """Train the policy model's LoRA adapter with GRPO on its own rollouts; publish it if evals do not regress."""
    if ctx.invoked_subcommand is not None:  # `train choices`: this group's options are not its
        return
    if dataset is not None:
        from deepresearch.app.console import dataset_paths

        questions, corpus = dataset_paths(dataset, questions, corpus)
    if rounds is None:  # "keep training as runs arrive" means no end unless one is given
        rounds = 0 if watch else 1
    check_inputs(questions, from_runs, corpus, dev, group_size, rounds, per_round, temperature, launcher,
                  num_processes, watch, train_roles, dev_corpus, index)
    if hours is not None and not 0 < hours <= 10_000:
        raise fail(f"--hours must be above 0 (got {hours})")
    if corpus is not None and index is not None:
        raise fail("give --corpus FILE or --index NAME for the local web, not both")
    if export_samples is not None and export_samples.exists() and not export_samples.is_dir():
        raise fail(f"--export-samples: {export_samples} is a file, not a directory")
    from deepresearch.app.commands.runs import parse_since

    since_dt = parse_since(since)
    settings = get_settings()
    cfg = apply_overrides(settings.train, group_size=group_size, temperature=temperature,
                           per_round=per_round, launcher=launcher, accelerate_config=accelerate_config,
                           num_processes=num_processes, train_roles=train_roles)
    if cfg.launch.launcher == "accelerate":
        from deepresearch.train.update.launch import accelerate_config_path

        try:
            accelerate_config_path(cfg.launch.accelerate_config)
        except FileNotFoundError as exc:
            raise fail(f"--accelerate-config: {exc}") from None
    synth = None
    if questions is None and not from_runs:  # questions synthesized from the documents (train/synth/)
        from .train_synth import synth_job

        if index is not None:
            check_index(settings, index)
        synth = synth_job(settings, cfg.synth, corpus, index)
        if dev is None and cfg.publish.dev_questions is None:  # the gate's dev set: the synthesized dev split
            dev_split = "dev"
        corpus, index, questions = synth.served, None, synth.questions
    dev_set = None
    if not no_gate:
        dev_set = resolve_dev_set(cfg, dev or cfg.publish.dev_questions or questions, dev_split or None,
                           dev_corpus or corpus or cfg.publish.dev_corpus, dev_size)
    # Logged questions are replayed against the search backends their runs used (train/rounds/replay.py), unless a
    # corpus or an index is named for the local web.
    replay = from_runs and corpus is None and index is None and cfg.rollout.index is None
    index_name = None if corpus is not None or replay else (index or cfg.rollout.index or settings.index)
    if index_name is not None:
        check_index(settings, index_name)
    items = synth.items if synth is not None else load_questions(questions, split or None) \
        if questions is not None else None
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.app.runtime import quiet_libraries

    quiet_libraries()
    with closing(TraceStore(settings.paths.traces_db)) as store:  # closed on every exit, early ones included
        made = {"made": dict(synth.made.stats.made), "kept": dict(synth.made.stats.kept)} if synth else None
        job = TrainJob(items=items, since=since_dt, corpus=corpus, index=index_name, dev=dev_set, rounds=rounds,
                       watch=watch, resume=resume, export_dir=export_samples, replay=replay, hours=hours,
                       synthesized=made)
        asyncio.run(_train(store, settings, cfg, job))


async def _train(store: TraceStore, settings: Settings, cfg: TrainSettings, job: TrainJob) -> None:
    from deepresearch.agent.model.base import ModelError
    from deepresearch.app.runtime import adapter_registry, build_model_from
    from deepresearch.tools.index.store import IndexNotFound
    from deepresearch.train.rounds.checkpoint import Checkpoint, CheckpointError, question_stream, resumable
    from deepresearch.train.rounds.environment import rollout_environment
    from deepresearch.train.rounds.loop import LoopContext, RoundReport, TrainLoop
    from deepresearch.train.rounds.questions import questions_from_runs
    from deepresearch.train.rounds.replay import replay_environment
    from deepresearch.train.rounds.schedule import TimeBudget, fixed_rounds, watch_rounds
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from_runs_items = job.items is None
    items = questions_from_runs(store, since=job.since) if job.items is None else job.items
    if not items and not job.watch:
        raise fail("no logged questions to train on" + (" in that period" if job.since else "") +
                   ": ask some with `deepresearch ask` first (or use --watch to wait for them)")
    # Logged questions change as people ask: only a fixed question set is checked on resume.
    stream = "" if job.watch or from_runs_items else question_stream(
        [q.id for q in items], cfg.grpo.seed, cfg.rollout.questions_per_round, cfg.grpo.num_generations)
    work_dir = settings.data_dir / "train"
    resumed = None
    if job.resume:  # checked before the model and the corpus load: a bad resume fails in a second
        try:
            resumed = resumable(Checkpoint(work_dir / "checkpoint"), stream)
        except CheckpointError as exc:
            raise fail(f"--resume: {exc}") from None
        if not job.watch and resumed.rounds_done >= job.rounds:
            out.print(f"nothing to do: the checkpoint has {resumed.rounds_done} round(s) done (--rounds {job.rounds}); "
                      "raise --rounds to train further")
            return
    # Checked (indexes, set-ups announced) before the model loads.
    replayer = _replayer(settings, items) if job.replay else None
    model_dir = base_model_dir(settings, cfg)
    try:
        models = [build_model_from(settings.model_copy(update={"model": settings.model.model_copy(
            update={"adapter": None})}))]
        models += _extra_servers(settings, cfg)
    except ModelError as exc:
        raise fail(f"model: {exc}") from None
    registry = adapter_registry(settings)  # a fresh one serves the starter adapter, which training then continues
    feed = _run_sources_feed(settings, cfg, store, job, work_dir) if from_runs_items else None
    try:
        environment = replay_environment(replayer) if replayer is not None else rollout_environment(
            settings.tools, corpus=job.corpus, index=job.index)
        async with environment as env:
            if feed is not None and not job.watch:
                await feed.refresh()
            columns = (TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
            with Progress(*columns, console=err, transient=False) as bar:
                ctx = LoopContext(
                    settings=cfg, model_dir=model_dir, models=models, toolbox=env.toolbox, store=store,
                    agent=settings.agent, tools=settings.tools, registry=registry,
                    work_dir=work_dir, dev=job.dev, doc_id_for=_doc_ids(env, feed), toolbox_for=_toolboxes(env, feed),
                    judge_model=models[0] if cfg.rewards.judge > 0 else None, max_tokens=settings.model.max_tokens,
                    launcher=cfg.launch.launcher, accelerate_config=cfg.launch.accelerate_config,
                    num_processes=cfg.launch.num_processes, eval_temperature=settings.model.temperature,
                    export_dir=job.export_dir, progress=RichPhases(bar),
                )
                loop = TrainLoop(ctx, resume=resumed, stream=stream)
                if job.synthesized:  # the first round's line says what was synthesized
                    loop.synthesized = job.synthesized
                budget = TimeBudget(job.hours * 3600) if job.hours is not None else None

                def print_round(report: RoundReport) -> None:
                    bar.console.print(report.line(), markup=False, highlight=False)

                if job.watch:
                    bar.console.print(f"watching for new runs and feedback (every {cfg.watch_poll_s:.0f} s; "
                                      "Ctrl-C stops)")
                    await watch_rounds(loop, store, cfg, job.since, job.rounds, print_round, budget,
                                       extra=_watch_extra(feed, loop, cfg) if feed is not None else None)
                else:
                    pick = _mixed_picker(feed, loop, items, cfg) if feed is not None and feed.set else None
                    ran = await fixed_rounds(loop, items, cfg, job.rounds, print_round, budget, pick)
                    if loop.rounds_done < job.rounds:
                        out.print(f"stopped after {ran} round(s) (--hours {job.hours:g}): {loop.rounds_done} of "
                                  f"{job.rounds} done; run the same command with --resume to continue")
                    else:
                        out.print(f"done: {job.rounds} round(s); serving {registry.current or 'the base model'}")
    except IndexNotFound as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        err.print("stopped; the trainer checkpoint and published adapters are kept")
    finally:
        if feed is not None:
            await feed.close()
        for model in models:
            await model.close()


def _run_sources_feed(settings: Settings, cfg: TrainSettings, store: TraceStore, job: TrainJob,
                      work_dir: Path) -> RunSourcesFeed | None:
    """Questions synthesized over the sources the logged runs read (train/synth/feed.py), unless turned off."""
    if not cfg.synth.from_runs:
        return None
    from deepresearch.train.synth.feed import RunSourcesFeed

    return RunSourcesFeed(settings.tools, store, cfg.synth, work_dir / "synth" / "runs",
                          lambda line: err.print(line, markup=False, highlight=False), since=job.since)


def _toolboxes(env: Any, feed: RunSourcesFeed | None) -> Any:
    """A synthesized question searches its sources' web; any other question where its environment says."""
    if feed is None:
        return env.toolbox_for

    def toolbox_for(question: TrainQuestion) -> Any:
        if feed.owns(question):
            return feed.toolbox
        return env.toolbox_for(question) if env.toolbox_for is not None else env.toolbox
    return toolbox_for


def _doc_ids(env: Any, feed: RunSourcesFeed | None) -> Any:
    if feed is None:
        return env.doc_id_for
    return lambda url: feed.doc_id_for(url) or env.doc_id_for(url)


def _synth_count(cfg: TrainSettings, feed: RunSourcesFeed) -> int:
    per_round = cfg.rollout.questions_per_round
    return min(per_round, round(per_round * cfg.synth.from_runs_share)) if feed.set is not None else 0


def _mixed_picker(feed: RunSourcesFeed, loop: Any, items: list[TrainQuestion], cfg: TrainSettings) -> Any:
    """Round k: the replays' k-th slice and, beside them, synthesized questions (`train.synth.from_runs_share` of
    the round, more when there are too few replays)."""
    from deepresearch.train.rounds.questions import round_questions

    loop.synthesized = feed.synthesized()

    def pick(k: int) -> list[TrainQuestion]:
        per_round, wanted = cfg.rollout.questions_per_round, _synth_count(cfg, feed)
        replays = round_questions(items, k, per_round - wanted, cfg.grpo.seed) if per_round > wanted else []
        return feed.questions(k, per_round - len(replays), cfg.grpo.seed) + replays
    return pick


def _watch_extra(feed: RunSourcesFeed, loop: Any, cfg: TrainSettings) -> Any:
    """`--watch`: before each round, the sources read so far are read again; new ones bring new questions."""
    async def extra(k: int) -> list[TrainQuestion]:
        if await feed.refresh():
            loop.synthesized = feed.synthesized()
        return feed.questions(k, _synth_count(cfg, feed), cfg.grpo.seed)
    return extra


def _replayer(settings: Settings, items: list[TrainQuestion]) -> ReplayToolboxes:
    """Logged questions are replayed each in the search set-up its run recorded (train/rounds/replay.py): its
    backend chain and SearxNG URL, or its local index only for `ask --offline` runs; keys and questions
    whose runs recorded nothing use today's settings."""
    from deepresearch.app.runtime import ensure_index
    from deepresearch.train.rounds.questions import SearchSource
    from deepresearch.train.rounds.replay import ReplayToolboxes

    today = SearchSource.from_snapshot({"tools": {"search": settings.tools.search.model_dump(mode="json")},
                                        "index": settings.index}) or SearchSource()
    replayer = ReplayToolboxes(settings.tools, today, settings.index, lambda name: ensure_index(settings, name),
                               lambda line: err.print(line, markup=False, highlight=False))
    try:
        replayer.plan(items)
    except LookupError as exc:
        raise fail(f"replaying logged questions: {exc}") from None
    return replayer


def _extra_servers(settings: Settings, cfg: TrainSettings) -> list:
    from deepresearch.agent.model.remote.openai_client import OpenAIChatModel

    return [OpenAIChatModel(url, settings.model.name, settings.model.api_key.get_secret_value(),
                            timeout_s=settings.model.request_timeout_s, max_retries=settings.model.max_retries)
            for url in cfg.rollout.model_urls]


TRAIN_EXAMPLES = """Examples:
  deepresearch train --dataset demo --group-size 4 --rounds 1   (the bundled demo set; works offline)
  deepresearch train --questions qa.jsonl --corpus corpus.jsonl --group-size 8 --rounds 2
  deepresearch train --from-runs --since 7d        (replay what people asked, with their feedback)
  deepresearch train --from-runs --watch           (keep training as new runs and feedback arrive)
  deepresearch train --index mydocs --rounds 4     (questions synthesized from the documents, answers known)
  deepresearch train --corpus ~/notes --rounds 4   (the same from a folder of files or a corpus jsonl)
  deepresearch train questions --index mydocs      (what would be synthesized, without training)
  deepresearch train --questions qa.jsonl --corpus corpus.jsonl --train-roles planner
  deepresearch train choices --out /tmp/choices --bridges   (the answer and bridge choice alone, on QA questions)
  deepresearch train starter --index mydocs --out /tmp/starter   (that choice 3 times on synthesized questions,
                                                                 averaged: a starter adapter)
  deepresearch adapters list | adapters rollback
Training needs token ids and logprobs: the embedded model or a vLLM server (deepresearch serve-model)."""


def register(app: typer.Typer) -> None:
    from .train_choices import CHOICES_EXAMPLES, choices
    from .train_starter import STARTER_EXAMPLES, starter
    from .train_synth import QUESTIONS_EXAMPLES, questions

    train_app = typer.Typer(invoke_without_command=True)
    train_app.callback(epilog=TRAIN_EXAMPLES)(train)
    train_app.command("choices", epilog=CHOICES_EXAMPLES)(choices)
    train_app.command("questions", epilog=QUESTIONS_EXAMPLES)(questions)
    train_app.command("starter", epilog=STARTER_EXAMPLES)(starter)
    app.add_typer(train_app, name="train")
