"""Agent bench: N pool dev questions through the full graph with the embedded model and the local web.

Prints, per run and in total: finished/stop status, verified citations, wall time, LLM tokens, and how
the wall time splits between the model, the tools and our own graph overhead (targets: overhead < 5 %,
tools < 20 %). Busy time is the union of the logged call intervals, so parallel executors are not
counted twice.

    .venv/bin/python bench/agent.py --limit 20            # ~20-40 min on 2 cores

The local web's URLs are in the prompts: to compare two benches' traces byte for byte, give both the
same --port (and each its own fresh --data-dir).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research  # noqa: E402
from deepresearch.agent.trace.store import TraceStore  # noqa: E402
from deepresearch.app.runtime import build_model_from, quiet_libraries  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from deepresearch.evals.data.dataset import load_corpus, load_questions, select_questions  # noqa: E402
from deepresearch.evals.run.environment import eval_environment  # noqa: E402
from deepresearch.evals.scoring.metrics import exact_match, f1  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

POOL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "pool"


def union_seconds(intervals: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b > end:
            total += b - max(a, end)
            end = b
    return total


def time_split(store: TraceStore, run_id: str) -> tuple[float, float]:
    """(model seconds, tool-only seconds) from the run's logged events (ts is the end of a call)."""
    model, tools = [], []
    for ev in store.events(run_id):
        if ev.kind == "llm":
            model.append((ev.ts - ev.payload["timings"]["total_s"], ev.ts))
        elif ev.kind == "tool":
            tools.append((ev.ts - ev.payload["duration_s"], ev.ts))
    model_s = union_seconds(model)
    return model_s, union_seconds(model + tools) - model_s


def port_number(text: str) -> int:
    port = int(text)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a TCP port (1-65535)")
    return port


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, default=POOL / "questions.jsonl")
    ap.add_argument("--corpus", type=Path, default=POOL / "corpus.jsonl")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", type=Path, default=None, help="default: a fresh temporary directory")
    ap.add_argument("--port", type=port_number, default=None,
                    help="serve the local web on this port, or fail if it is taken (default: the corpus's own "
                         "port, another when that one is taken); pin it to compare two benches' prompts")
    args = ap.parse_args()
    quiet_libraries()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-agent-"))
    settings = load_settings(data_dir=data_dir)
    questions = select_questions(load_questions(args.questions), split="dev", limit=args.limit, seed=args.seed)
    console = Console(width=160)
    t0 = time.perf_counter()
    model = build_model_from(settings)
    console.print(f"model loaded in {time.perf_counter() - t0:.1f}s; {len(questions)} questions; data {data_dir}")
    store = TraceStore(settings.paths.traces_db)
    rows = []
    async with eval_environment(args.corpus, load_corpus(args.corpus), settings.tools, port=args.port) as tools:
        for q in questions:
            runtime = ResearchRuntime(model=model, toolbox=tools.toolbox, store=store, settings=settings.agent)
            result = await research(q.question, runtime, options=RunOptions(tags={"bench": "agent"}))
            wall = result.usage.get("wall_s", 0.0)
            model_s, tool_s = time_split(store, result.run_id)
            rows.append({
                "q": q, "status": result.status, "cites": result.verified_citations, "wall": wall,
                "tokens": result.usage.get("llm_tokens", 0), "model": model_s / wall, "tools": tool_s / wall,
                "em": exact_match(result.answer, q.golds, q.is_yes_no), "f1": f1(result.answer, q.golds, q.is_yes_no),
            })
            console.print(f"{len(rows):2d}. {result.status:11s} cites={result.verified_citations} "
                          f"{wall:6.1f}s {rows[-1]['tokens']:6d} tok  answer={result.answer[:40]!r}")
    await model.close()

    table = Table("#", "question", "status", "verified cites", "wall s", "tokens", "model %", "tools %",
                  "overhead %", "F1", title=f"agent bench: {len(rows)} pool dev questions, embedded 135M model")
    for i, r in enumerate(rows, 1):
        table.add_row(str(i), r["q"].question[:48], r["status"], str(r["cites"]), f"{r['wall']:.1f}",
                      str(r["tokens"]), f"{100 * r['model']:.1f}", f"{100 * r['tools']:.1f}",
                      f"{100 * (1 - r['model'] - r['tools']):.1f}", f"{r['f1']:.2f}")
    walls = [r["wall"] for r in rows]
    total = sum(walls)
    model_share = sum(r["model"] * r["wall"] for r in rows) / total
    tool_share = sum(r["tools"] * r["wall"] for r in rows) / total
    table.add_section()
    table.add_row("all", f"finished {sum(r['status'] == 'finished' for r in rows)}/{len(rows)}", "",
                  f"{sum(r['cites'] for r in rows)} ({sum(r['cites'] > 0 for r in rows)} runs ≥1)",
                  f"p50 {statistics.median(walls):.1f}", f"mean {statistics.mean(r['tokens'] for r in rows):.0f}",
                  f"{100 * model_share:.1f}", f"{100 * tool_share:.1f}",
                  f"{100 * (1 - model_share - tool_share):.1f}", f"{statistics.mean(r['f1'] for r in rows):.2f}")
    console.print(table)
    console.print(f"targets: overhead < 5 % (got {100 * (1 - model_share - tool_share):.1f} %), "
                  f"tools < 20 % (got {100 * tool_share:.1f} %); EM {statistics.mean(r['em'] for r in rows):.2f}")


if __name__ == "__main__":
    asyncio.run(main())
