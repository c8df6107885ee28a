"""The real-agent-call workload of bench/model.py: record it from graph runs, load it, replay it.

    .venv/bin/python bench/model_workload.py record [--limit 5] [--out bench/agent_calls.jsonl]

Recording runs the graph (the eval runner's `graph` system) on the first pool dev questions of the
bundled `demo` dataset, with a throw-away data dir, through a wrapper around the embedded model that
writes every request (messages, JSON schema, sampling) as one JSON line. The trace does not keep the
schema (an extractor's schema embeds its source's sentences as an enum), hence the wrapper.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deepresearch.agent.model.embedded.config import EngineConfig

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE / "agent_calls.jsonl"


def load_workload(path: Path = WORKLOAD) -> list[dict[str, Any]]:
    """Recorded calls: {"role", "messages", "schema", "max_tokens"} per line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# The recorder sees requests, not roles: each role's system prompt opens with its own words.
ROLE_MARKS = {"the planner": "planner", "read one source": "extractor", "research executor": "executor",
              "You coordinate": "coordinator", "final answer": "writer"}


def role_of(messages: list[dict[str, str]]) -> str:
    system = next((m["content"] for m in messages if m["role"] == "system"), "")
    return next((role for mark, role in ROLE_MARKS.items() if mark in system[:200]), "other")


def requests(calls: list[dict[str, Any]], adapter: str | None = None, roles: set[str] = frozenset()) -> list[Any]:
    """The recorded calls as greedy ChatRequests (T 0, so jump-forward on and off can be compared); the calls
    of `roles` on `adapter` (a role-scoped adapter, as in training rollouts: batches mix it with the base)."""
    from deepresearch.agent.model.types import ChatRequest, Message, Sampling

    return [
        ChatRequest(messages=[Message(**m) for m in call["messages"]], json_schema=call["schema"],
                    sampling=Sampling(temperature=0.0, max_tokens=call["max_tokens"]),
                    adapter=adapter if role_of(call["messages"]) in roles else None)
        for call in calls
    ]


@dataclass
class Replay:
    """One pass over the workload: wall time and what every call returned."""

    wall_s: float
    completions: list[Any]

    @property
    def tokens(self) -> int:
        return sum(len(c.completion_token_ids) for c in self.completions)

    @property
    def forced(self) -> int:
        return sum(len(c.forced_positions) for c in self.completions)

    @property
    def tokens_per_pass(self) -> float | None:
        """Emitted tokens per forward pass over the calls whose passes were counted (not vLLM's, not a greedy
        result reused from another call); None when none were."""
        counted = [c for c in self.completions if c.timings.forward_passes]
        passes = sum(c.timings.forward_passes for c in counted)
        return sum(len(c.completion_token_ids) for c in counted) / passes if passes else None

    @property
    def prefill_s(self) -> float:
        """Summed prefill time of the calls (a share of wall only at batch 1, where calls do not overlap)."""
        return sum(c.timings.prefill_s for c in self.completions)

    @property
    def decode_s(self) -> float:
        return sum(c.timings.decode_s for c in self.completions)

    @property
    def prompt_tokens(self) -> int:
        return sum(len(c.prompt_token_ids) for c in self.completions)

    @property
    def parsed_ok(self) -> int:
        return sum(c.parsed is not None for c in self.completions)


async def replay(model: Any, reqs: list[Any], batch: int) -> Replay:
    """Batch 1: one call after another. Batch B: B calls in flight at a time (the engine's max_batch)."""
    gate = asyncio.Semaphore(batch)

    async def one(request: Any) -> Any:
        async with gate:
            return await model.complete(request)

    started = time.perf_counter()
    completions = list(await asyncio.gather(*(one(r) for r in reqs)))
    return Replay(time.perf_counter() - started, completions)


def differences(calls: list[dict[str, Any]], a: Replay, b: Replay) -> list[str]:
    """Calls whose parsed outputs differ between two replays, one line each."""
    lines = []
    for i, (call, x, y) in enumerate(zip(calls, a.completions, b.completions, strict=True)):
        if x.parsed != y.parsed:
            lines.append(f"  #{i} {role_of(call['messages'])}: {x.text[:150]!r}\n{'':6}vs {y.text[:150]!r}")
    return lines


def print_comparison(calls: list[dict[str, Any]], a: Replay, b: Replay, label: str) -> None:
    """How many calls two replays (`label`: "x vs y at batch n") give the same parsed output, and the others."""
    diff = differences(calls, a, b)
    print(f"{label}: same parsed output {len(calls) - len(diff)}/{len(calls)}")
    print("\n".join(diff))


async def record(limit: int, out: Path) -> None:
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.model.types import ChatRequest, Completion

    class Recorder(ChatModel):
        """Passes every call through to the real model and appends the request to `out`."""

        def __init__(self, inner: ChatModel) -> None:
            self.inner, self.model_name = inner, inner.model_name
            self.lines: list[str] = []

        async def complete(self, request: ChatRequest) -> Completion:
            self.lines.append(json.dumps({
                "messages": [m.model_dump() for m in request.messages],
                "schema": request.json_schema,
                "max_tokens": request.sampling.max_tokens,
            }))
            return await self.inner.complete(request)

        async def load_adapter(self, name: str, path: Path) -> None:
            await self.inner.load_adapter(name, path)

        async def unload_adapter(self, name: str) -> None:
            await self.inner.unload_adapter(name)

        def adapters(self) -> list[str]:
            return self.inner.adapters()

    data_dir = Path(tempfile.mkdtemp(prefix="bench-record-"))
    os.environ["DEEPRESEARCH_DATA_DIR"] = str(data_dir)
    from deepresearch.agent.model.factory import build_model
    from deepresearch.agent.model.policy import RunPolicy
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.app.settings import get_settings
    from deepresearch.evals.data.dataset import bundled_dataset
    from deepresearch.evals.run.runner import EvalRuntime, EvalSelection, execute_eval, plan_eval

    settings = get_settings()
    questions, corpus = bundled_dataset("demo")
    policy = RunPolicy(temperature=0.0, max_tokens=settings.model.max_tokens)
    plan = plan_eval(EvalSelection(questions=questions, corpus=corpus, split="dev", limit=limit), systems=["graph"],
                     out_dir=data_dir / "eval", model_name=settings.model.name, seed=0, policy=policy)
    model = Recorder(build_model(settings.model, cache_dir=settings.cache_dir, adapters_dir=settings.paths.adapters))
    store = TraceStore(settings.paths.traces_db)
    try:
        evals = settings.eval.model_copy(update={"concurrency": min(limit, 8)})
        runtime = EvalRuntime(model=model, store=store, agent=settings.agent, tools=settings.tools, evals=evals)
        await execute_eval(plan, runtime, progress=False)
    finally:
        store.close()
        await model.inner.close()
    out.write_text("".join(line + "\n" for line in model.lines))
    print(f"{len(model.lines)} calls from {limit} questions → {out} ({out.stat().st_size / 1e3:.0f} kB); "
          f"data dir {data_dir}", file=sys.stderr)


def machine_line() -> str:
    """What decides the products' speed here: OpenBLAS's kernel (OPENBLAS_CORETYPE can force an older one) and
    the bf16 probe's verdict (model.bf16_products = auto)."""
    from deepresearch.agent.model.embedded.config import default_threads
    from deepresearch.agent.model.embedded.layers.bf16 import probe_verdict

    try:
        from threadpoolctl import threadpool_info

        kernel = next((f"{i['architecture']} ({i['version']})" for i in threadpool_info()
                       if i.get("internal_api") == "openblas"), "not found")
    except ImportError:
        kernel = "unknown (no threadpoolctl)"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    on, timings = probe_verdict(default_threads())
    return (f"OpenBLAS kernel {kernel}" + (f", forced by OPENBLAS_CORETYPE={forced}" if forced else "")
            + f"; bf16 probe: fp32 {timings['fp32_s'] * 1e3:.2f} ms, bf16 {timings['bf16_s'] * 1e3:.2f} ms"
            + f" -> auto = {'bf16' if on else 'fp32'}")


@dataclass(frozen=True)
class EngineSpec:
    """One engine column of the agent workload: jump-forward mode, prefix reuse ("on", "system" = system messages
    only, "off"), forward, and the lean forward's GGUF products, split attention and bf16 products ("auto" as the
    settings' default, "off" = "-nobf16", "on" = "-bf16")."""

    mode: str
    prefix: str = "on"
    forward: str = "lean"
    gguf: bool = True
    split: bool = True
    bf16: str = "auto"

    @property
    def name(self) -> str:
        lean = self.forward == "lean"
        return (self.mode + {"on": "", "off": "-noprefix", "system": "-sysprefix"}[self.prefix]
                + ("" if lean else f"-{self.forward}") + ("" if self.gguf or not lean else "-fp32")
                + ("" if self.split or not lean else "-nosplit")
                + ("" if self.bf16 == "auto" or not lean else {"off": "-nobf16", "on": "-bf16"}[self.bf16]))

    def config(self, max_batch: int) -> EngineConfig:
        """The embedded engine's config for this column."""
        from deepresearch.agent.model.embedded.config import EngineConfig

        return EngineConfig(max_batch=max_batch, jump_forward=self.mode, prefix_cache=self.prefix != "off",
                            forward=self.forward, gguf_products=self.gguf, bf16_products=self.bf16,
                            **({"prompt_cache_tokens": 0} if self.prefix == "system" else {}))


def parse_engine(name: str) -> EngineSpec:
    """A column name back to its engine: "off-transformers" → EngineSpec("off", forward="transformers")."""
    mode, *flags = name.split("-")
    unknown = set(flags) - {"noprefix", "sysprefix", "transformers", "fp32", "nosplit", "bf16", "nobf16"}
    if (mode not in ("off", "forced", "verified") or unknown or {"noprefix", "sysprefix"} <= set(flags)
            or {"bf16", "nobf16"} <= set(flags)):
        raise SystemExit(f"bench/model.py: unknown engine {name!r} (e.g. verified, off-transformers, forced-noprefix, "
                         "verified-sysprefix, verified-fp32, verified-nosplit, verified-nobf16, verified-bf16)")
    prefix = "off" if "noprefix" in flags else "system" if "sysprefix" in flags else "on"
    bf16 = "on" if "bf16" in flags else "off" if "nobf16" in flags else "auto"
    return EngineSpec(mode, prefix, "transformers" if "transformers" in flags else "lean", "fp32" not in flags,
                      "nosplit" not in flags, bf16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the graph on pool dev questions and record its model calls")
    rec.add_argument("--limit", type=int, default=5)
    rec.add_argument("--out", type=Path, default=WORKLOAD)
    args = parser.parse_args()
    asyncio.run(record(args.limit, args.out))


if __name__ == "__main__":
    main()
