"""Does the information-gain reward term help GRPO? A cheap measurement on one real rollout round.

    nice -n 15 .venv/bin/python scripts/information_gain.py --out /tmp/info-gain --questions 16 --group-size 4

1. Rollouts (skipped when OUT/groups.json exists): pool train questions of every type (no yes/no), each
   answered G times by the real graph with SmolLM2-135M embedded, every role sampling at the training
   temperature, the learning demo's small budget; the groups are saved to OUT/groups.json. Stopped early
   (kill it), `--score-only` takes the finished runs of every group that has at least two.
2. Scoring: every run's information term (train/rounds/information.py) with the rollout's model, then the
   round's rewards under outcome only and the default reward, each without and with the information
   term at each of --weights. For each: groups with reward variance (the trainer drops the others), and
   how many keep a non-zero advantage with stratify="searches". For the term itself: its mean on correct
   vs other runs, its correlation with correctness and with gold evidence, and how often a correct run
   of a group gains more than a wrong one. Writes OUT/information.json.

No update here: a training comparison with and without the term takes hours on this CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).parent))
from learning_demo import POOL, build_world  # noqa: E402 - same world as the learning demo


def pearson(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3 or statistics.pstdev(xs) == 0 or statistics.pstdev(ys) == 0:
        return None
    return statistics.correlation(xs, ys)


async def run(args: argparse.Namespace) -> dict:
    from deepresearch.agent.config import AgentSettings, BudgetSettings
    from deepresearch.agent.graph.run import ResearchRuntime
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig
    from deepresearch.agent.model.factory import embedded_model_dir
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.config import ToolSettings
    from deepresearch.train.config import RewardSettings
    from deepresearch.train.rounds.environment import rollout_environment
    from deepresearch.train.rounds.questions import questions_from_file
    from deepresearch.train.rounds.rollout import RolloutGroup, RolloutSpec, rollout_groups

    out: Path = args.out
    qfile, corpus = build_world(out / "world", args.questions, 1, args.seed, None)
    questions = questions_from_file(qfile, split="train")[: args.questions]
    cache = Path(os.environ.get("DEEPRESEARCH_CACHE_DIR") or Path.home() / ".cache" / "deepresearch")
    model = EmbeddedChatModel.load(embedded_model_dir(cache), EngineConfig(max_batch=args.concurrency))
    store = TraceStore(out / "data" / "traces.db")
    groups_file = out / "groups.json"
    started = time.monotonic()
    try:
        if args.score_only and not groups_file.is_file():  # rollouts stopped early: the groups' finished runs
            finished = [r for r in store.list_runs(limit=None) if r.status != "running" and "group_id" in r.tags]
            by_q = {q.id: q for q in questions}
            groups_by_id: dict[str, RolloutGroup] = {}
            for r in sorted(finished, key=lambda r: int(r.tags["member"])):
                g = groups_by_id.setdefault(r.tags["group_id"], RolloutGroup(
                    group_id=r.tags["group_id"], question=by_q[r.tags["question_id"]]))
                g.run_ids.append(r.id)
            kept = [g for g in groups_by_id.values() if len(g.run_ids) >= args.min_group]
            groups_file.write_text(json.dumps([g.model_dump(mode="json") for g in kept]))
        if not groups_file.is_file():
            agent = AgentSettings(budget=BudgetSettings(max_plan_steps=1, max_rounds=1, max_executor_turns=2,
                                                        max_tool_calls=4))
            async with rollout_environment(ToolSettings(data_dir=out / "data"), corpus=corpus) as env:
                runtime = ResearchRuntime(model=model, toolbox=env.toolbox, store=store, settings=agent)
                policy = RunPolicy(temperature=args.temperature, seed=args.seed, max_tokens=args.max_tokens)
                spec = RolloutSpec(group_size=args.group_size, round_index=1, policy=policy,
                                   concurrency=args.concurrency)
                done = [0]

                def tick() -> None:
                    done[0] += 1
                    print(f"[{(time.monotonic() - started) / 60:5.1f} min] run {done[0]}", flush=True)

                groups = await rollout_groups(questions, [runtime], spec, on_run_done=tick)
            groups_file.write_text(json.dumps([g.model_dump(mode="json") for g in groups]))
        groups = [RolloutGroup.model_validate(g) for g in json.loads(groups_file.read_text())]
        from deepresearch.evals.data.dataset import load_corpus
        from deepresearch.evals.run.environment import eval_environment
        from deepresearch.train.rounds.information import InformationScorer
        from deepresearch.train.rounds.scoring import RoundScoring, score_groups, search_calls

        # The doc ids of findings and citations come from the local web's URLs, as in the trainer.
        async with eval_environment(corpus, load_corpus(corpus), ToolSettings(data_dir=out / "data")) as env:
            assert env is not None
            doc_id_for = env.doc_id_for
            t0 = time.monotonic()
            scorer = InformationScorer(model, adapter=None)
            base = RewardSettings()
            outcome_only = RewardSettings(correctness=1.0, f1=0.0, citation=0.0, evidence=0.0, cost=0.0)
            configs = {"outcome": outcome_only, "default": base}
            for w in args.weights:
                configs[f"outcome+information@{w}"] = outcome_only.model_copy(update={"information": w})
                configs[f"default+information@{w}"] = base.model_copy(update={"information": w})
            result: dict = {"command": " ".join([sys.executable, *sys.argv]), "groups": len(groups),
                            "runs": sum(len(g.run_ids) for g in groups), "weights": args.weights, "configs": {}}
            for name, cfg in configs.items():
                row = {}
                for stratify in ("none", "searches"):
                    scoring = RoundScoring(cfg, "group", stratify, doc_id_for=doc_id_for, information=scorer)
                    scores = await score_groups(groups, store, scoring)
                    row[f"groups_kept_stratify_{stratify}"] = len(scores.kept)
                row["reward_mean"] = scores.summary()["reward_mean"]
                result["configs"][name] = row
            result["scoring_seconds"] = time.monotonic() - t0
            # The term against correctness and gold evidence, run by run (the last scoring logged every term).
            info, correct, gold_ev, searches = [], [], [], []
            centred: dict[str, list[float]] = {"information": [], "f1": [], "outcome": []}  # minus group means
            wins = pairs = 0  # within a group: does a correct run gain more than a wrong one?
            for g in scores.groups:
                rows = [(r.terms["information"], r.tier == "correct") for r in g.rewards if "information" in r.terms]
                wins += sum((a > b) + 0.5 * (a == b) for a, ca in rows for b, cb in rows if ca and not cb)
                pairs += sum(1 for _, ca in rows for _, cb in rows if ca and not cb)
                if all({"information", "f1", "outcome"} <= set(r.terms) for r in g.rewards):
                    for key, values in centred.items():
                        xs = [r.terms[key] for r in g.rewards]
                        values += [x - statistics.mean(xs) for x in xs]
                for r in g.rewards:
                    if "information" in r.terms:
                        info.append(r.terms["information"])
                        correct.append(float(r.tier == "correct"))
                        gold_ev.append(float(r.terms.get("evidence", 0.0) > 0))
                        searches.append(search_calls(store, r.run_id))

            def mean_where(flags: list[float], want: float) -> float | None:
                picked = [i for i, f in zip(info, flags, strict=True) if f == want]
                return round(statistics.mean(picked), 4) if picked else None

            result["information"] = {
                "runs_with_term": len(info), "correct_runs": int(sum(correct)),
                "mean": round(statistics.mean(info), 4) if info else None,
                "mean_correct": mean_where(correct, 1.0), "mean_not_correct": mean_where(correct, 0.0),
                "corr_with_correct": pearson(info, correct),
                "within_group_correct_above_wrong": {"pairs": pairs, "share": wins / pairs if pairs else None},
                "within_group_corr_with_f1": pearson(centred["information"], centred["f1"]),
                "within_group_corr_with_outcome": pearson(centred["information"], centred["outcome"]),
                "gold_evidence_runs": int(sum(gold_ev)),
                "mean_gold_evidence": mean_where(gold_ev, 1.0), "mean_no_gold_evidence": mean_where(gold_ev, 0.0),
                "corr_with_gold_evidence": pearson(info, gold_ev),
                "searches": {str(k): searches.count(k) for k in sorted(set(searches))},
            }
    finally:
        await model.close()
        store.close()
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=Path("/tmp/info-gain"))
    p.add_argument("--questions", type=int, default=16)
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--max-tokens", type=int, default=192)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--weights", type=float, nargs="+", default=[0.1, 0.3, 1.0],
                   help="weights of the information term in the +information rows")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--score-only", action="store_true",
                   help="no more rollouts: score the groups' finished runs in OUT (those with ≥ --min-group runs)")
    p.add_argument("--min-group", type=int, default=2)
    args = p.parse_args()
    if not POOL.is_dir():
        raise SystemExit(f"error: pool data not found at {POOL}")
    args.out.mkdir(parents=True, exist_ok=True)
    result = asyncio.run(run(args))
    (args.out / "information.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
