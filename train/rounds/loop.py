"""The closed loop, one round at a time: rollout → score → update → eval gate → publish.

The policy being trained is a LoRA adapter. Its rollouts always come from its latest version (GRPO
is on-policy), which is loaded into the serving model under its own name; users keep getting the
registry's current adapter until a candidate passes the eval gate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.reader import ANSWER_ROLE, BRIDGE_ROLE
from pydantic import BaseModel, Field

from ..adapters.publish import DevSet, GateResult, GateRun, eval_gate, publish, serve_adapter
from ..adapters.registry import AdapterRegistry
from ..choice.answer_choice import ChoiceExample, logged_examples
from ..config import TrainSettings, trainable_roles
from ..update.batching import count_micro_batches
from ..update.updater import UpdateStats
from .checkpoint import Checkpoint, LoopState
from .information import InformationScorer
from .questions import TRAIN_TAG, TrainQuestion
from .rollout import RolloutSpec, rollout_groups
from .scoring import RoundScoring, round_samples, score_groups

if TYPE_CHECKING:
    from deepresearch.agent.config import AgentSettings
    from deepresearch.agent.graph.run import ResearchRuntime
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.toolbox import Toolbox

PHASES = ("rollout", "score", "update", "eval")


class Progress(Protocol):
    def start(self, phase: str, total: int) -> Callable[[int], None]: ...  # returns advance(n)


class NoProgress:
    def start(self, phase: str, total: int) -> Callable[[int], None]:
        return lambda n=1: None


class RoundReport(BaseModel):
    round: int
    adapter: str | None = None
    rollout_runs: int = 0
    failures: list[str] = Field(default_factory=list)
    scores: dict[str, Any] = Field(default_factory=dict)
    samples: int = 0
    skipped_calls: int = 0
    choice_examples: int = 0  # logged answer-candidate sets holding the gold (the re-ranker's choice loss)
    bridge_examples: int = 0  # logged bridge-name sets with a name that leads on (the hop's choice loss)
    update: UpdateStats | None = None
    gate: GateResult | None = None
    published: bool = False
    seconds: dict[str, float] = Field(default_factory=dict)
    note: str = ""
    # The round's questions by kind (synthesized: one_hop, two_hop, comparison, unanswerable; "given": a QA file's
    # or a logged one), and, when questions were synthesized for this round, how many of each kind were made / kept.
    questions: dict[str, int] = Field(default_factory=dict)
    synthesized: dict[str, dict[str, int]] = Field(default_factory=dict)

    def line(self) -> str:
        """The round in one line, as `train` prints it."""
        r = self
        s = r.scores
        parts = [f"round {r.round}: {r.rollout_runs} runs"]
        if set(r.questions) - {"given"}:
            used = " + ".join(f"{n} {kind}" for kind, n in r.questions.items())
            made = r.synthesized.get("made", {})
            kept = r.synthesized.get("kept", {})
            parts.append(f"questions {used}" + (" (synthesized, kept/made: " + ", ".join(
                f"{kept.get(k, 0)}/{n} {k}" for k, n in made.items()) + ")" if made else ""))
        if s.get("reward_mean") is not None:
            parts.append(f"reward {s['reward_mean']:.3f} ({s.get('groups_kept', 0)}/{s.get('groups', 0)} groups kept)")
        if r.failures:
            parts.append(f"{len(r.failures)} failed runs")
        if r.update is not None and r.update.samples:
            trained = f"{r.update.samples} of {r.samples} samples (roles trained)" if r.update.samples < r.samples \
                else f"{r.samples} samples"
            parts.append(f"{trained}, update {r.update.seconds:.0f} s ({r.update.tokens_per_s:.0f} tok/s) "
                         f"loss {r.update.loss:+.4f}" + (f", peak GPU {r.update.peak_gpu_gib:.1f} GiB"
                                                       if r.update.peak_gpu_gib else ""))
        if r.update is not None and r.update.choice_examples:
            answers = r.update.choice_examples - r.bridge_examples  # the update counts both kinds of set
            sets = f"{answers} candidate sets" + (f" + {r.bridge_examples} bridge sets" if r.bridge_examples else "")
            parts.append(f"answer choice: {sets}, loss {r.update.choice_loss:.3f}"
                         + ("" if r.update.samples else f", update {r.update.seconds:.0f} s"))
        if r.update is not None and r.update.choice_note:
            parts.append(r.update.choice_note)
        if r.adapter:
            parts.append(f"adapter {r.adapter}")
        if r.gate is not None:
            parts.append(r.gate.line())
        if r.adapter:
            parts.append("now serving it" if r.published else "not published")
        if r.note:
            parts.append(r.note)
        return " · ".join(parts)


@dataclass
class LoopContext:
    settings: TrainSettings
    model_dir: Path  # base model weights (HF safetensors) the trainer loads
    models: list[ChatModel]  # serving model(s): rollouts, eval and hot-load target
    toolbox: Toolbox
    store: TraceStore
    agent: AgentSettings
    tools: ToolSettings
    registry: AdapterRegistry
    work_dir: Path  # trainer checkpoints, eval dirs
    dev: DevSet | None = None  # None = no gate (publish every round)
    doc_id_for: Callable[[str], str | None] | None = None
    toolbox_for: Callable[[TrainQuestion], Toolbox] | None = None  # per-question toolbox (replays), else `toolbox`
    judge_model: ChatModel | None = None
    max_tokens: int = 384
    launcher: str = "inprocess"  # or "accelerate"
    accelerate_config: str = "ddp"
    num_processes: int = 1
    eval_temperature: float = 0.0
    export_dir: Path | None = None  # also write each round's samples here (verl Parquet layout)
    progress: Progress = field(default_factory=NoProgress)


class TrainLoop:
    """Rounds of the closed loop. With `resume`, it continues after the last round its checkpoint committed
    (checkpoint.py): same adapter, optimiser, round number and question stream."""

    def __init__(self, ctx: LoopContext, resume: LoopState | None = None, stream: str = ""):
        """`resume`: the state `checkpoint.resumable()` loaded; None = a fresh training on `stream`."""
        self.ctx = ctx
        self.updater: Any = None
        self.checkpoint = Checkpoint(ctx.work_dir / "checkpoint")
        self.state = resume if resume is not None else LoopState(stream=stream, policy_adapter=ctx.registry.current)
        self.round_index = self.state.rounds_done
        # Training continues the adapter it trained last, or (fresh) what is served.
        self.policy_adapter: str | None = self.state.policy_adapter if self.state.rounds_done \
            else ctx.registry.current
        self._leftovers_cleared = resume is None
        # What was synthesized for the next round (made / kept by kind): its report says so, once.
        self.synthesized: dict[str, dict[str, int]] = {}

    @property
    def rounds_done(self) -> int:
        return self.state.rounds_done

    def _commit(self, report: RoundReport) -> None:
        self.state.rounds_done = report.round
        self.state.policy_adapter = self.policy_adapter
        self.state.log.append(report.model_dump(mode="json"))
        self.checkpoint.commit(self.state)

    def _clear_leftovers(self) -> None:
        """After a kill: finish the last committed round's publish, and set aside what the round the kill cut
        short left behind (its unpublished adapter, its runs still marked running)."""
        ctx, state = self.ctx, self.state
        if (name := state.last_published) and ctx.registry.exists(name) and ctx.registry.current != name:
            ctx.registry.set_current(name, action="publish")
        for name in ctx.registry.names():
            meta = ctx.registry.metadata(name)
            if meta.get("train_id") == state.train_id and int(meta.get("round") or 0) > state.rounds_done \
                    and name != ctx.registry.current:
                ctx.registry.remove(name)
        for run in ctx.store.list_runs(limit=None, tags={"train_id": state.train_id}, status="running"):
            if int(run.tags.get(TRAIN_TAG) or 0) > state.rounds_done:
                ctx.store.set_status(run.id, "interrupted")

    async def run_round(self, questions: list[TrainQuestion]) -> RoundReport:
        ctx, cfg = self.ctx, self.ctx.settings
        if not self._leftovers_cleared:
            self._clear_leftovers()
            self._leftovers_cleared = True
        self.round_index += 1
        report = RoundReport(round=self.round_index, synthesized=self.synthesized)
        self.synthesized = {}
        for q in questions:
            report.questions[q.kind or "given"] = report.questions.get(q.kind or "given", 0) + 1
        self.checkpoint.begin()
        clock = time.perf_counter()

        if self.policy_adapter is not None:  # e.g. the served adapter, when training starts from it
            await serve_adapter(self.policy_adapter, ctx.registry, ctx.models, activate=False)
        total = len(questions) * cfg.grpo.num_generations
        advance = ctx.progress.start("rollout", total)
        policy = RunPolicy(
            adapter=ctx.registry.choice(self.policy_adapter), temperature=cfg.grpo.temperature,
            sampled_roles=cfg.rewards.trained_roles() if cfg.rollout.greedy_untrained_roles else None,
            seed=cfg.grpo.seed, max_tokens=ctx.max_tokens,
        )
        spec = RolloutSpec(group_size=cfg.grpo.num_generations, round_index=self.round_index, policy=policy,
                           concurrency=cfg.rollout.concurrency, tags={"train_id": self.state.train_id})
        groups = await rollout_groups(questions, self._runtimes(), spec, on_run_done=lambda: advance(1),
                                      toolbox_for=ctx.toolbox_for)
        report.rollout_runs = sum(len(g.run_ids) for g in groups)
        report.failures = [f for g in groups for f in g.failures]
        report.seconds["rollout"], clock = time.perf_counter() - clock, time.perf_counter()

        advance = ctx.progress.start("score", len(groups))
        # The information term is the rollout policy's own judgement: same model, the re-ranker's adapter.
        information = InformationScorer(ctx.models[0], policy.adapter_for(ANSWER_ROLE)) if ctx.models else None
        scoring = RoundScoring(cfg.rewards, cfg.grpo.scale_rewards, cfg.grpo.stratify, doc_id_for=ctx.doc_id_for,
                               judge_model=ctx.judge_model, information=information)
        scores = await score_groups(groups, ctx.store, scoring, adapter=self.policy_adapter,
                                    on_group_done=lambda: advance(1))
        report.scores = scores.summary()
        samples, skipped = round_samples(scores, ctx.store, cfg.rewards.role_weights)
        report.samples, report.skipped_calls = len(samples), len(skipped)
        # Every group counts here, not only those with reward variance: the choice loss needs only the gold
        # (or, for a replayed question, the answer its user rated well).
        choice = logged_examples(ctx.store, [(rid, g.question.question, g.question.choice_golds) for g in groups
                                             for rid in g.run_ids]) if cfg.trains_answer_choice() else []
        report.choice_examples = len(choice)
        if cfg.trains_bridge_choice():
            bridges = await self._bridge_examples(groups)
            report.bridge_examples, choice = len(bridges), choice + bridges
        if ctx.export_dir is not None and samples:
            from ..update.export import write_samples

            write_samples(samples, ctx.export_dir / f"round-{self.round_index:04d}.parquet")
        report.seconds["score"], clock = time.perf_counter() - clock, time.perf_counter()
        if not samples and not choice:
            report.note = ("no group had reward variance, no run's answer candidates held the gold and no "
                           "hop's names had one that leads on: nothing to learn this round")
            self._commit(report)
            return report

        name = ctx.registry.next_name(cfg.adapter_prefix)
        metadata = {
            "name": name, "round": self.round_index, "train_id": self.state.train_id,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "parent": self.policy_adapter, "rewards": report.scores,
            "roles": sorted(roles) if (roles := self._answering_roles()) else None,
            "data": {"questions": [q.id for q in questions], "groups": [g.group_id for g in groups],
                     "samples": len(samples), "choice_examples": report.choice_examples,
                     "bridge_examples": report.bridge_examples},
        }
        report.update = await self._update(samples, choice, ctx.registry.path(name), metadata)
        report.adapter = name
        for model in ctx.models:  # the new policy rolls out next round, and is what the gate evaluates
            await model.load_adapter(name, ctx.registry.path(name))
        previous, self.policy_adapter = self.policy_adapter, name
        report.seconds["update"], clock = time.perf_counter() - clock, time.perf_counter()

        gate = None
        if ctx.dev is not None:
            advance = ctx.progress.start("eval", 2 * len(ctx.dev.seeds))
            await serve_adapter(ctx.registry.current, ctx.registry, ctx.models, activate=False)  # the baseline
            gate = await eval_gate(name, ctx.registry.current, ctx.dev, ctx.registry, self._gate_run())
            advance(2 * len(ctx.dev.seeds))
        report.gate = gate
        report.published = gate is None or gate.passed
        report.seconds["eval"] = time.perf_counter() - clock
        # Committed before it is served: a kill in between is finished by the resume (_clear_leftovers).
        self._commit(report)
        # The trainer names every adapter explicitly, so its models keep no active adapter.
        await publish(name, ctx.registry, ctx.models, gate, activate=False)
        if previous is not None and previous != ctx.registry.current:
            for model in ctx.models:  # an old candidate nobody serves: free its memory
                if previous in model.adapters():
                    await model.unload_adapter(previous)
        return report

    async def _bridge_examples(self, groups: list) -> list[ChoiceExample]:
        """The hops' bridge sets of the round's QA questions (a replayed one has no gold documents, and its own
        search set-up), each name searched with the rollouts' tools."""
        from ..choice.bridge_examples import HopOutcomes, logged_bridge_examples

        ctx = self.ctx
        by_toolbox: dict[int, tuple[Any, list]] = {}
        for g in groups:
            if g.question.search is not None:
                continue
            # A question's hops are searched where its rollouts searched (synthesized ones may have a web of their own).
            toolbox = ctx.toolbox_for(g.question) if ctx.toolbox_for is not None else ctx.toolbox
            by_toolbox.setdefault(id(toolbox), (toolbox, []))[1].extend(
                (rid, g.question.question, g.question.gold_doc_ids) for rid in g.run_ids)
        examples: list[ChoiceExample] = []
        for toolbox, runs in by_toolbox.values():
            examples += await logged_bridge_examples(ctx.store, runs, HopOutcomes(toolbox, ctx.doc_id_for))
        return examples

    def _answering_roles(self) -> frozenset[str] | None:
        """The roles the next adapter answers for: those trained now, plus those its parent answered
        for (it starts from the parent's weights); None = every role. A trained writer also re-ranks
        its answer options (ANSWER_ROLE), as the writer's weights always have; so does an adapter the
        choice loss trains. The hop's bridge is chosen only by an adapter whose scope names BRIDGE_ROLE
        (bridge_scoring.py), so an adapter that learned it lists its roles instead of None."""
        cfg = self.ctx.settings
        trained = cfg.rewards.trained_roles()
        if trained is None and cfg.trains_bridge_choice():
            trained = frozenset(trainable_roles())
        if trained is not None:
            trained = trained | {ANSWER_ROLE} if "writer" in trained or cfg.trains_answer_choice() \
                else trained - {ANSWER_ROLE}
            trained = trained if cfg.trains_bridge_choice() else trained - {BRIDGE_ROLE}
        if self.policy_adapter is None or trained is None:
            return trained
        inherited = self.ctx.registry.choice(self.policy_adapter).roles
        if inherited is None:  # the parent answered for every role
            return frozenset(trainable_roles()) if BRIDGE_ROLE in trained else None
        return trained | inherited

    def _runtimes(self) -> list[ResearchRuntime]:
        """One research runtime per serving model: rollouts are dealt to them round-robin."""
        from deepresearch.agent.graph.run import ResearchRuntime

        ctx = self.ctx
        return [ResearchRuntime(model=m, toolbox=ctx.toolbox, store=ctx.store, settings=ctx.agent) for m in ctx.models]

    def _gate_run(self) -> GateRun:
        from deepresearch.evals.run.runner import EvalRuntime

        ctx = self.ctx
        runtime = EvalRuntime(model=ctx.models[0], store=ctx.store, agent=ctx.agent, tools=ctx.tools)
        return GateRun(runtime=runtime, out_root=ctx.work_dir / "evals", temperature=ctx.eval_temperature,
                       max_tokens=ctx.max_tokens)

    async def _update(self, samples: list, choice: list[ChoiceExample], out: Path,
                      metadata: dict[str, Any]) -> UpdateStats:
        ctx, cfg = self.ctx, self.ctx.settings
        # The committed checkpoint holds this training's updater state once it has made an update.
        resume = self.checkpoint.root if self.state.updates and self.checkpoint.has_updater_state() else None
        if ctx.launcher == "accelerate":
            advance = ctx.progress.start("update", 1)
            from ..update.launch import Launcher, UpdateState, launch_update

            init = None if resume else self._init_adapter_path()
            state = UpdateState(init_adapter=init, resume=resume, state_out=self.checkpoint.staging)
            launcher = Launcher(ctx.accelerate_config, ctx.num_processes)
            stats = await asyncio.to_thread(launch_update, ctx.model_dir, samples, out, cfg, launcher, state, metadata,
                                            choice)
            advance(1)
        else:
            # one tick per micro-batch of the token loss, and one for the choice steps
            advance = ctx.progress.start("update", count_micro_batches(samples, cfg.grpo) + bool(choice))
            if self.updater is None:
                self.updater = await asyncio.to_thread(self._make_updater, resume)
            stats = await asyncio.to_thread(self.updater.train_round, samples, lambda done, total: advance(1), choice)
            if choice:
                advance(1)
            await asyncio.to_thread(self.updater.save_adapter, out, {**metadata, "update": stats.model_dump()})
            await asyncio.to_thread(self.updater.save_state, self.checkpoint.staging)
        self.state.updates += 1
        return stats

    def _init_adapter_path(self) -> Path | None:
        return self.ctx.registry.path(self.policy_adapter) if self.policy_adapter else None

    def _make_updater(self, resume: Path | None) -> Any:
        from ..update.updater import GRPOUpdater

        return GRPOUpdater(self.ctx.model_dir, self.ctx.settings,
                           init_adapter=None if resume else self._init_adapter_path(), resume_from=resume)
