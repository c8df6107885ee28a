"""Learning demonstration: GRPO on pool train questions, on this CPU, in under an hour of training.

    .venv/bin/python scripts/learning_demo.py --minutes 55 --out /tmp/learning-demo
    .venv/bin/python scripts/learning_demo.py --out /tmp/learning-demo --recheck 2 3   # more eval seeds, after

Defaults: comparison questions; only the planner trained (the other roles decode greedily, so a group's
reward differences are the planner's); the evidence term (share of gold documents found) at 1.0 beside the
other terms; advantages scaled by the round's std; lr 5e-4; 2 GRPO passes a round (dev/results/README.md).

1. The world: the questions' candidate documents (gold + distractors; --world pool: the whole pool corpus)
   served as the local web; the real graph and tools; SmolLM2-135M embedded.
2. Dev reward before training: every dev question answered once per eval seed, decoded like the
   rollouts (trained roles sample at the training temperature, the others greedily); the run reward is
   the trainer's own reward (outcome tiers, F1, citations, evidence, cost).
3. Training rounds (rollout G runs per question → score → one GRPO update) while another round fits in
   the training budget (--minutes). No eval gate here: this script measures dev itself.
4. Dev reward after, with the same questions and seeds. The noise band is the spread over seeds.
5. Dev EM at T 0 (every role greedy, as `ask` answers) of the base model, every --em-every rounds'
   adapter and the final one: the learning curve of what a user sees.
Writes summary.json and learning.png, and prints the `deepresearch eval` command that measures the final
adapter against the base on the 100 reference dev questions with paired intervals.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
POOL = Path("/work/shared/data/pool")
from deepresearch.agent.prompts import ROLES  # noqa: E402 - light import, after the env settings above


def build_world(out: Path, n_train: int, n_dev: int, seed: int, types: list[str] | None = None,
                train_sources: list[str] | None = None, whole_pool: bool = False) -> tuple[Path, Path]:
    """Train/dev questions (no yes/no; of the given types if any; train ones only from `train_sources` if
    given, so the other sources stay a slice the trainer never saw) and the union of their candidate
    documents as the corpus, or the whole pool corpus (what the reference eval searches)."""
    rows_all = [json.loads(line) for line in (POOL / "questions.jsonl").open()]
    rows = [q for q in rows_all if not q.get("yes_no") and q.get("answer_in_gold_docs")
            and (not types or q.get("type") in types)]
    rng = random.Random(seed)
    train = [q for q in rows if q["split"] == "train" and (not train_sources or q.get("source") in train_sources)]
    dev = [q for q in rows if q["split"] == "dev"]
    rng.shuffle(train)
    rng.shuffle(dev)
    train, dev = train[:n_train], dev[:n_dev]
    if not train or not dev:
        known = {key: ", ".join(sorted({q.get(key) for q in rows_all})) for key in ("type", "source")}
        raise SystemExit(f"error: no pool train/dev questions of types {types} (train sources {train_sources}); "
                         f"the types are: {known['type']}; the sources: {known['source']}")
    from deepresearch.evals.data.dataset import write_subset

    qfile, corpus = write_subset(train + dev, POOL / "corpus.jsonl", out)
    return qfile, (POOL / "corpus.jsonl" if whole_pool else corpus)


async def dev_rewards(questions, runtime, policy, *, label: str, doc_id_for, cfg, concurrency: int) -> list[dict]:
    """Each dev question answered once, decoded by `policy` (its seed is the eval seed; each question's run
    seed derives from it); the trainer's reward of each run, through the shared run-and-score path."""
    from deepresearch.agent.graph.run import RunOptions
    from deepresearch.evals.run.scored_run import run_scored
    from deepresearch.train.rounds.rewards import score_run
    from deepresearch.train.rounds.rollout import run_seed

    gate = asyncio.Semaphore(concurrency)

    async def one(q) -> dict:
        options = RunOptions(tags={"demo_eval": label, "seed": policy.seed})
        async with gate:
            scored = await run_scored(q.question, runtime, policy.with_seed(run_seed(policy.seed, 0, q.id, 0)),
                                      options, gold=q, doc_id_for=doc_id_for,
                                      reward=lambda facts: score_run(facts, q, cfg.rewards))
        if scored.reward is None:  # the run raised: a measurement with a hole in it is not one
            raise RuntimeError(f"dev question {q.id}: {scored.error}")
        reward = scored.reward
        return {"question_id": q.id, "run_id": scored.run_id, "reward": reward.total, "terms": reward.terms,
                "tier": reward.tier, "em": scored.em, "gold_evidence": scored.gold_evidence}

    return list(await asyncio.gather(*(one(q) for q in questions)))


def gold_evidence(store, run_id: str, gold_doc_ids: list[str], doc_id_for) -> bool:
    """Whether any finding of a rollout run came from one of the question's gold documents: the search the
    planner and executors ran found the evidence the writer needs (read as run_scored and the evidence
    reward read it, a finding's URL standing for its document when the finding names none)."""
    from deepresearch.evals.run.scored_run import facts_from_trace

    return facts_from_trace(store, run_id, doc_id_for).found_any(gold_doc_ids)


def profile(runs_by_seed: dict[int, list[dict]]) -> dict:
    """What the dev runs did, beyond the reward: answer tiers, citation term, gold evidence found."""
    runs = [r for runs in runs_by_seed.values() for r in runs]
    return {"runs": len(runs), "tiers": dict(Counter(r["tier"] or "none" for r in runs)),
            "citation_term": statistics.mean(r["terms"].get("citation", 0.0) for r in runs),
            "evidence_term": statistics.mean(r["terms"].get("evidence", 0.0) for r in runs),
            "gold_evidence": statistics.mean(float(r["gold_evidence"]) for r in runs)}


VERDICTS = {True: "rose beyond noise", False: "did NOT rise beyond noise", None: "one eval seed: no noise band"}


def band(values: list[float]) -> dict:
    return {"mean": statistics.mean(values), "low": min(values), "high": max(values), "per_seed": values}


async def run(args: argparse.Namespace) -> dict:
    from deepresearch.agent.config import AgentSettings, BudgetSettings
    from deepresearch.agent.graph.run import ResearchRuntime
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig
    from deepresearch.agent.model.factory import embedded_model_dir
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings
    from deepresearch.train.adapters.registry import AdapterRegistry
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.rounds.environment import rollout_environment
    from deepresearch.train.rounds.loop import LoopContext, TrainLoop
    from deepresearch.train.rounds.questions import questions_from_file, round_questions

    started = time.monotonic()
    out = args.out
    qfile, corpus = build_world(out / "world", args.train_questions, args.dev_questions, args.seed, args.types,
                                args.train_sources, whole_pool=args.world == "pool")
    train_qs = questions_from_file(qfile, split="train")
    dev_qs = questions_from_file(qfile, split="dev")
    cache = Path(os.environ.get("DEEPRESEARCH_CACHE_DIR") or Path.home() / ".cache" / "deepresearch")
    model_dir = embedded_model_dir(cache)
    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=args.concurrency, reuse_greedy=True))
    store = TraceStore(out / "data" / "traces.db")
    tools = ToolSettings(data_dir=out / "data")
    agent = AgentSettings(budget=BudgetSettings(max_plan_steps=1, max_rounds=1, max_executor_turns=2,
                                                max_tool_calls=4))
    cfg = TrainSettings()
    cfg.grpo = cfg.grpo.model_copy(update={"num_generations": args.group_size, "temperature": args.temperature,
                                           "learning_rate": args.lr, "seed": args.seed,
                                           "num_iterations": args.num_iterations,
                                           "scale_rewards": args.scale_rewards})
    cfg.rewards = cfg.rewards.model_copy(update={"evidence": args.evidence_weight})
    if args.train_roles:  # a role weight of 0 drops that role's calls from the update (they cost nothing)
        cfg.rewards = cfg.rewards.training_only(args.train_roles)
    cfg.rollout = cfg.rollout.model_copy(update={"concurrency": args.concurrency,
                                                 "questions_per_round": args.questions_per_round})
    registry = AdapterRegistry(out / "data" / "adapters")
    log = lambda msg: print(f"[{(time.monotonic() - started) / 60:5.1f} min] {msg}", flush=True)  # noqa: E731
    # The dev runs decode like the rollouts: only the trained roles sample (greedy_untrained_roles).
    sampled = cfg.rewards.trained_roles() if cfg.rollout.greedy_untrained_roles else None

    def dev_policy(adapter: str | None, seed: int, temperature: float = args.temperature) -> RunPolicy:
        return RunPolicy(adapter=registry.choice(adapter), temperature=temperature, sampled_roles=sampled,
                         seed=seed, max_tokens=args.max_tokens)

    summary: dict = {"command": " ".join([sys.executable, *sys.argv]), "settings": vars(args) | {"out": str(out)},
                     "checkpoints": []}
    try:
        async with rollout_environment(tools, corpus=corpus) as env:
            runtime = ResearchRuntime(model=model, toolbox=env.toolbox, store=store, settings=agent)
            common = dict(doc_id_for=env.doc_id_for, cfg=cfg, concurrency=args.concurrency)
            if args.recheck:
                return await recheck(args, dev_qs, registry, runtime, dev_policy, **common)
            t0 = time.monotonic()
            before = {s: await dev_rewards(dev_qs, runtime, dev_policy(None, s), label="before", **common)
                      for s in args.eval_seeds}
            eval_s = time.monotonic() - t0
            summary["dev_before"] = band([statistics.mean(r["reward"] for r in runs) for runs in before.values()])
            summary["dev_before_profile"] = profile(before)
            log(f"dev reward before: {summary['dev_before']} {summary['dev_before_profile']} ({eval_s / 60:.1f} min)")

            async def checkpoint(round_: int, adapter: str | None) -> None:
                """Dev EM of the adapter at T 0 (every role greedy, as `ask` answers): the learning curve."""
                runs = await dev_rewards(dev_qs, runtime, dev_policy(adapter, 0, temperature=0.0), label=f"em-{round_}",
                                         **common)
                ems = [float(r["em"] or 0.0) for r in runs]
                summary["checkpoints"].append({"round": round_, "adapter": adapter, "em": statistics.mean(ems),
                                               "correct": int(sum(ems)), "questions": len(ems),
                                               "per_question": {r["question_id"]: r["em"] for r in runs}})
                log(f"dev EM at round {round_} ({adapter or 'base'}): {int(sum(ems))}/{len(ems)}")

            await checkpoint(0, None)
            ctx = LoopContext(settings=cfg, model_dir=model_dir, models=[model], toolbox=env.toolbox, store=store,
                              agent=agent, tools=tools, registry=registry, work_dir=out / "data" / "train",
                              doc_id_for=env.doc_id_for, max_tokens=args.max_tokens)
            loop = TrainLoop(ctx)
            rounds: list[dict] = []
            by_id = {q.id: q for q in train_qs}
            round_s = 0.0
            train_started = time.monotonic()
            deadline = train_started + args.minutes * 60
            # Stop when another round, as long as the longest so far, would not fit in the training budget.
            while time.monotonic() + max(round_s, 60.0) < deadline:
                t_round = time.monotonic()
                report = await loop.run_round(round_questions(train_qs, loop.round_index + 1,
                                                              args.questions_per_round, args.seed))
                round_s = max(round_s, time.monotonic() - t_round)
                runs = store.list_runs(limit=None, tags={"train_round": report.round})
                rewards = [e.payload["total"] for r in runs for e in store.events(r.id, "reward")[-1:]]
                found = [gold_evidence(store, r.id, by_id[r.tags["question_id"]].gold_doc_ids, env.doc_id_for)
                         for r in runs if r.tags.get("question_id") in by_id]
                rounds.append({"round": report.round, "reward_mean": statistics.mean(rewards) if rewards else None,
                               "reward_std": statistics.pstdev(rewards) if len(rewards) > 1 else 0.0,
                               "adapter": report.adapter, "samples": report.samples,
                               "update": report.update.model_dump() if report.update else None,
                               "terms": report.scores.get("terms"), "tiers": report.scores.get("tiers"),
                               "gold_evidence": statistics.mean(map(float, found)) if found else None})
                log(f"round {report.round}: reward {rounds[-1]['reward_mean']} tiers {rounds[-1]['tiers']} "
                    f"gold evidence {rounds[-1]['gold_evidence']} samples {report.samples} "
                    f"adapter {report.adapter} ({(time.monotonic() - t_round) / 60:.1f} min)")
                if args.em_every and report.round % args.em_every == 0:
                    t_eval = time.monotonic()
                    await checkpoint(report.round, loop.policy_adapter)
                    deadline += time.monotonic() - t_eval  # the curve's evals are not training time
            summary["train"] = rounds
            summary["train_minutes"] = (time.monotonic() - train_started) / 60
            final = loop.policy_adapter
            if rounds and summary["checkpoints"][-1]["round"] != rounds[-1]["round"]:
                await checkpoint(rounds[-1]["round"], final)
            after = {s: await dev_rewards(dev_qs, runtime, dev_policy(final, s), label="after", **common)
                     for s in args.eval_seeds}
            summary["dev_after"] = band([statistics.mean(r["reward"] for r in runs) for runs in after.values()])
            summary["dev_after_profile"] = profile(after)
            summary["final_adapter"] = final
            summary["dev_runs"] = {"before": before, "after": after}
            log(f"dev reward after ({final}): {summary['dev_after']} {summary['dev_after_profile']}")
    finally:
        await model.close()
        store.close()
    b, a = summary["dev_before"], summary["dev_after"]
    noise = (b["high"] - b["low"]) / 2 + (a["high"] - a["low"]) / 2
    summary["rise"] = a["mean"] - b["mean"]
    summary["noise"] = noise
    summary["rose_beyond_noise"] = summary["rise"] > noise if len(args.eval_seeds) > 1 else None
    summary["minutes"] = (time.monotonic() - started) / 60
    return summary


async def recheck(args: argparse.Namespace, dev_qs, registry, runtime, dev_policy, **common) -> dict:
    """Dev reward of the base model and of a finished demo's final adapter on more eval seeds: a second,
    independent measurement of the rise (same world, questions and temperature as the demo)."""
    done = json.loads((args.out / "summary.json").read_text())
    final = done["final_adapter"]
    await runtime.model.load_adapter(final, registry.path(final))
    result: dict = {"command": " ".join([sys.executable, *sys.argv]), "final_adapter": final, "seeds": args.recheck}
    for label, adapter in (("before", None), ("after", final)):
        runs = {s: await dev_rewards(dev_qs, runtime, dev_policy(adapter, s), label=f"recheck-{label}", **common)
                for s in args.recheck}
        result[f"dev_{label}"] = band([statistics.mean(r["reward"] for r in rs) for rs in runs.values()])
        result[f"dev_{label}_profile"] = profile(runs)
        result[f"runs_{label}"] = runs
    b, a = result["dev_before"], result["dev_after"]
    result["rise"] = a["mean"] - b["mean"]
    result["noise"] = (b["high"] - b["low"]) / 2 + (a["high"] - a["low"]) / 2
    result["rose_beyond_noise"] = result["rise"] > result["noise"]
    return result


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    profiles = "dev_before_profile" in summary
    checkpoints = summary.get("checkpoints") or []
    panels = 2 + profiles + bool(checkpoints)
    fig, axes = plt.subplots(1, panels, figsize=(5.4 * panels, 4.2))
    left, right = axes[0], axes[1]
    rounds = [r for r in summary["train"] if r["reward_mean"] is not None]
    xs = [r["round"] for r in rounds]
    means = [r["reward_mean"] for r in rounds]
    stds = [r["reward_std"] for r in rounds]
    left.plot(xs, means, marker="o", label="mean reward of the round's rollouts")
    left.fill_between(xs, [m - s for m, s in zip(means, stds, strict=True)],
                      [m + s for m, s in zip(means, stds, strict=True)], alpha=0.2, label="± 1 std")
    if all((r.get("terms") or {}).get("evidence") is not None for r in rounds):
        left.plot(xs, [r["terms"]["evidence"] for r in rounds], marker="s", color="tab:green",
                  label="evidence term of the round's rollouts")
    steps = summary["settings"].get("num_iterations", 1)
    left.set(title=f"train reward per round ({steps} optimiser step{'s' if steps > 1 else ''} each)",
             xlabel="round", ylabel="reward")
    left.legend(fontsize=8)
    for i, key in enumerate(("dev_before", "dev_after")):
        b = summary[key]
        right.bar(i, b["mean"], color="tab:blue" if i == 0 else "tab:green", alpha=0.7)
        right.errorbar(i, b["mean"], yerr=[[b["mean"] - b["low"]], [b["high"] - b["mean"]]], color="black",
                       capsize=8)
        right.scatter([i] * len(b["per_seed"]), b["per_seed"], color="black", s=12, zorder=3)
    right.set_xticks([0, 1], ["before", f"after ({summary.get('final_adapter') or 'base'})"])
    verdict = VERDICTS[summary["rose_beyond_noise"]]
    right.set(title=f"dev reward, band = spread over {len(summary['dev_before']['per_seed'])} eval seeds\n"
                    f"{verdict}: Δ {summary['rise']:+.3f}"
                    + ("" if summary["rose_beyond_noise"] is None else f" vs noise {summary['noise']:.3f}"),
              ylabel="reward")
    if profiles:  # what changed in the runs: evidence from gold documents, the citation term
        third = axes[2]
        before, after = summary["dev_before_profile"], summary["dev_after_profile"]
        keys = [k for k in ("gold_evidence", "evidence_term", "citation_term") if k in before]
        for j, key in enumerate(keys):
            for i, prof in enumerate((before, after)):
                third.bar(j * 3 + i, prof[key], color="tab:blue" if i == 0 else "tab:green", alpha=0.7,
                          label=("before", "after")[i] if j == 0 else None)
                third.text(j * 3 + i, prof[key] + 0.01, f"{prof[key]:.2f}", ha="center", fontsize=8)
        names = {"gold_evidence": "runs with gold-doc evidence", "evidence_term": "evidence term\n(gold docs found)",
                 "citation_term": "citation term"}
        third.set_xticks([j * 3 + 0.5 for j in range(len(keys))], [names[k] for k in keys])
        third.set(title="dev runs, all seeds: what changed", ylim=(0, 1.05))
        third.legend(fontsize=8)
    if checkpoints:  # what a user sees: the answers, at T 0, per checkpoint
        em = axes[-1]
        em.plot([c["round"] for c in checkpoints], [c["em"] for c in checkpoints], marker="o", color="tab:purple")
        for c in checkpoints:
            em.annotate(f"{c['correct']}/{c['questions']}", (c["round"], c["em"]), textcoords="offset points",
                        xytext=(0, 6), ha="center", fontsize=8)
        em.set(title="dev EM per checkpoint (T 0, every role greedy)", xlabel="round (0 = base model)",
               ylabel="exact match", ylim=(0, max(0.1, *(c["em"] for c in checkpoints)) * 1.25))
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def rise(summary: dict) -> str:
    b, a = summary["dev_before"], summary["dev_after"]
    return (f"dev reward {b['mean']:.3f} [{b['low']:.3f}, {b['high']:.3f}] → {a['mean']:.3f} [{a['low']:.3f}, "
            f"{a['high']:.3f}]: {VERDICTS[summary['rose_beyond_noise']]}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=55.0,
                   help="training budget (rollouts + updates); the dev evals before and after come on top")
    p.add_argument("--out", type=Path, default=Path("/tmp/learning-demo"))
    p.add_argument("--train-questions", type=int, default=64)
    p.add_argument("--dev-questions", type=int, default=32)
    p.add_argument("--types", nargs="+", default=["comparison"],
                   help="only pool questions of these types (bridge, comparison, 2hop, …); 'all' for every type")
    p.add_argument("--train-sources", nargs="+", metavar="SOURCE",
                   help="train only on pool questions from these sources (hotpotqa, musique); the others stay a "
                        "slice the trainer never saw")
    p.add_argument("--world", choices=["candidates", "pool"], default="candidates",
                   help="the local web: the chosen questions' candidate documents (gold + distractors, found almost "
                        "always), or the whole pool corpus, as the reference eval searches")
    p.add_argument("--em-every", type=int, default=2, metavar="ROUNDS",
                   help="dev EM at T 0 of the adapter every N rounds (and of the base model and the final adapter); "
                        "0 = only base and final")
    p.add_argument("--eval-seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--questions-per-round", type=int, default=4)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--max-tokens", type=int, default=192)
    p.add_argument("--num-iterations", type=int, default=2, help="GRPO passes over each round's samples")
    p.add_argument("--scale-rewards", choices=["group", "batch", "none"], default="batch",
                   help="divide advantages by the group's std (GRPO), the round's std, or not at all (Dr. GRPO)")
    p.add_argument("--train-roles", nargs="+", choices=[*ROLES, "all"], default=["planner"],
                   help="train only these roles; the adapter answers only for them ('all' = every role)")
    p.add_argument("--evidence-weight", type=float, default=1.0,
                   help="reward weight of the evidence term (share of gold documents the run found evidence in)")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--recheck", type=int, nargs="+", metavar="SEED",
                   help="no training: re-measure base vs the final adapter of the demo in --out on these eval seeds "
                        "(give the demo's other options too, so the world is the same)")
    args = p.parse_args()
    args.types, args.train_roles = (None if "all" in v else v for v in (args.types, args.train_roles))
    if not POOL.is_dir():
        raise SystemExit(f"error: pool data not found at {POOL}")
    if args.em_every < 0:
        raise SystemExit(f"error: --em-every must be 0 or more rounds (got {args.em_every})")
    if args.recheck and not (args.out / "summary.json").is_file():
        raise SystemExit(f"error: --recheck needs a finished demo in {args.out} (no summary.json there)")
    summary = asyncio.run(run(args))
    if args.recheck:
        (args.out / "recheck.json").write_text(json.dumps(summary, indent=2, default=str))
        print(f"recheck on seeds {args.recheck}: {rise(summary)} with {summary['final_adapter']}")
        return
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    plot(summary, args.out / "learning.png")
    print(f"{rise(summary)} after {len(summary['train'])} rounds in {summary['minutes']:.0f} min")
    print("dev EM per checkpoint (T 0): " + ", ".join(f"round {c['round']} {c['correct']}/{c['questions']}"
                                                      for c in summary["checkpoints"]))
    print(f"plot: {args.out / 'learning.png'}  summary: {args.out / 'summary.json'}")
    if summary.get("final_adapter"):  # the paired measurement on the reference questions, with the full budget
        print("base vs trained on 100 pool dev questions: deepresearch eval --questions "
              f"{POOL / 'questions.jsonl'} --corpus {POOL / 'corpus.jsonl'} --split dev --limit 100 --system graph "
              f"--concurrency 4 --temperature 0 --adapter {args.out / 'data' / 'adapters' / summary['final_adapter']} "
              f"--out {args.out / 'eval-pool-dev-100'}  (then `deepresearch eval compare` with the base's eval)")


if __name__ == "__main__":
    main()
