"""`train` killed with kill -9 mid-round and resumed ends where an uninterrupted `train` ends.

Real subprocesses of the real CLI, on a tiny random model with the real tokenizer (tests/train/tiny_model.py:
the engine, grammar, graph, trace, GRPO update and checkpoint all run for real; one research run takes
seconds). Decoding is one row at a time (max_batch 1), so a rerun of a round samples what it sampled first:
rollouts, rewards and samples match exactly. The update's floats match to thread numerics (CPU reductions
summed in a different order differ in the 9th digit even between two fresh processes), so they are compared
to a relative 1e-5 (1e-6 absolute).
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir
from deepresearch.agent.trace.store import TraceStore
from safetensors.torch import load_file

from ..app.helpers import clean_env, cli
from ..model.conftest import model_cache_dir
from .tiny_model import save_tiny_chat_model

TRAIN = ("train", "--dataset", "demo", "--group-size", "2", "--questions-per-round", "1", "--rounds", "3",
         "--no-gate")


def _env(tmp: Path, cache: Path) -> dict[str, str]:
    # bf16 products off: with them a prompt's keys and values depend on how it was split among cached prefixes
    # (bf16 above 24 rows, fp32 below), which the parallel executors' call order decides, so the sampler's
    # log μ differ between two processes by bf16's rounding (the mean gap by ~2e-6) where fp32's is ~1e-7.
    return clean_env(tmp, DEEPRESEARCH_CACHE_DIR=str(cache), DEEPRESEARCH_MODEL__MAX_BATCH="1",
                     DEEPRESEARCH_MODEL__MAX_TOKENS="48", DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                     DEEPRESEARCH_MODEL__BF16_PRODUCTS="off")


def _loop(data: Path) -> dict:
    return json.loads((data / "train" / "checkpoint" / "loop.json").read_text())


def _rounds(data: Path) -> list[dict]:
    """The round log without its clocks (and the adapters' timestamps): what must match."""
    timing = ("seconds",)
    out = []
    for entry in _loop(data)["log"]:
        entry = {k: v for k, v in entry.items() if k not in timing}
        if entry.get("update"):
            entry["update"] = {k: v for k, v in entry["update"].items() if k not in ("seconds", "tokens_per_s")}
        out.append(entry)
    return out


def _differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where `a` and `b` differ (empty: equal, floats to a relative 1e-5 or 1e-6 absolute: the sampler gap is
    ~1e-7 of float noise), each place with both values, so a failure says what differed."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{at}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{at}: {len(a)} != {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{at}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) else [f"{at}: {a!r} != {b!r}"]
    return [] if a == b else [f"{at}: {a!r} != {b!r}"]


def _runs(data: Path) -> dict[str, int]:
    store = TraceStore(data / "traces.db")
    try:
        statuses: dict[str, int] = {}
        for run in store.list_runs(limit=None):
            key = f"round {run.tags.get('train_round')} {run.status}"
            statuses[key] = statuses.get(key, 0) + 1
        return statuses
    finally:
        store.close()


def _wait_for_round_2_rollouts(data: Path, child: subprocess.Popen, deadline: float) -> None:
    while True:
        assert child.poll() is None, child.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "round 2 never started"
        loop = data / "train" / "checkpoint" / "loop.json"
        if loop.is_file() and json.loads(loop.read_text())["rounds_done"] == 1 and (data / "traces.db").is_file():
            store = TraceStore(data / "traces.db")
            try:
                if store.list_runs(limit=None, tags={"train_round": 2}):
                    return
            finally:
                store.close()
        time.sleep(0.1)


def test_train_killed_mid_round_and_resumed_ends_as_an_uninterrupted_run(tmp_path: Path):
    cache = tmp_path / "cache"
    save_tiny_chat_model(cache, embedded_model_dir(model_cache_dir()))  # its tokenizer files
    whole_env, killed_env = _env(tmp_path / "whole", cache), _env(tmp_path / "killed", cache)

    whole = cli(*TRAIN, env=whole_env, timeout=600)
    assert whole.returncode == 0, whole.stderr[-3000:]

    child = subprocess.Popen([sys.executable, "-m", "deepresearch", *TRAIN], env=killed_env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_round_2_rollouts(tmp_path / "killed" / "data", child, time.monotonic() + 300)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert _loop(tmp_path / "killed" / "data")["rounds_done"] == 1

    resumed = cli(*TRAIN, "--resume", env=killed_env, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "round 1:" not in resumed.stderr and "round 2:" in resumed.stderr, resumed.stderr[-2000:]

    whole_data, killed_data = tmp_path / "whole" / "data", tmp_path / "killed" / "data"
    differences = _differences(_rounds(killed_data), _rounds(whole_data))
    assert not differences, "killed and resumed != whole:\n" + "\n".join(differences)
    assert [r["round"] for r in _rounds(whole_data)] == [1, 2, 3]
    final = _loop(whole_data)["policy_adapter"]
    assert final is not None and _loop(killed_data)["policy_adapter"] == final
    a = load_file(whole_data / "adapters" / final / "adapter_model.safetensors")
    b = load_file(killed_data / "adapters" / final / "adapter_model.safetensors")
    assert a.keys() == b.keys() and all(a[k].allclose(b[k], rtol=1e-4, atol=1e-7) for k in a)
    assert sorted(p.name for p in (killed_data / "adapters").iterdir() if p.is_dir()) == \
        sorted(p.name for p in (whole_data / "adapters").iterdir() if p.is_dir())
    # The cut-short round's runs are kept, marked interrupted; every other round has what it had.
    whole_runs, killed_runs = _runs(whole_data), _runs(killed_data)
    interrupted = killed_runs.pop("round 2 interrupted", 0)
    assert 1 <= interrupted <= 2
    assert killed_runs == whole_runs
