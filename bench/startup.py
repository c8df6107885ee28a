"""Start-up bench: how long a new process (each `deepresearch ask` is one) takes to the planner's first token.

Each sample is a fresh interpreter that imports the engine, loads the embedded model and asks the
planner's first call for one token (its prompt and schema as the graph builds them). Three ways to
start, interleaved sample by sample:

- no stores:       nothing kept from earlier processes (the baseline)
- prefixes only:   the system-message keys/values on disk (`prefix-cache/`), grammars compiled anew
- prefixes+grammars: also xgrammar's tokenizer info and the planner's compiled schema (`grammar-cache/`)

The stores live in a temporary directory, filled by one unmeasured process first.

    .venv/bin/python bench/startup.py --runs 5        # ~2 min
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

CHILD = """
import asyncio, json, sys, time
started = time.perf_counter()
from pathlib import Path
from deepresearch.agent.graph.schemas import plan_schema
from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
from deepresearch.agent.model.embedded.config import EngineConfig
from deepresearch.agent.model.types import Sampling
from deepresearch.agent.prompts import load_prompt
imported = time.perf_counter()
store = sys.argv[2] or None
model = EmbeddedChatModel.load(Path(sys.argv[1]), EngineConfig(store_dir=Path(store) if store else None))
loaded = time.perf_counter()
messages = load_prompt("planner").messages(
    question="In what year did the playwright who wrote The City Heiress die?", max_steps=4, memory="", feedback="")


async def first_token() -> float:
    await model.chat(messages, schema=plan_schema(["search", "open", "python", "recall"], 4),
                     sampling=Sampling(max_tokens=1))
    done = time.perf_counter()
    await model.close()
    return done


first = asyncio.run(first_token())
print(json.dumps({"imports s": imported - started, "load s": loaded - imported, "first token s": first - loaded,
                  "total s": first - started}))
"""
MODES = ("no stores", "prefixes only", "prefixes+grammars")


def sample(model_dir: Path, store: Path | None) -> dict[str, float]:
    result = subprocess.run([sys.executable, "-c", CHILD, str(model_dir), str(store or "")],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"error: the start-up sample failed:\n{result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="samples per way to start (default 5)")
    args = parser.parse_args()
    if args.runs < 1:
        raise SystemExit("error: --runs must be at least 1")

    from deepresearch.agent.model.embedded.decoding.grammar_store import GRAMMAR_STORE_DIR_NAME
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from rich.console import Console
    from rich.table import Table

    model_dir = embedded_model_dir(load_settings().cache_dir)
    samples: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        store = Path(tmp)
        sample(model_dir, store)  # fills both stores
        for run in range(args.runs):
            for mode in MODES if run % 2 == 0 else MODES[::-1]:
                if mode == "prefixes only":
                    shutil.rmtree(store / GRAMMAR_STORE_DIR_NAME, ignore_errors=True)
                samples[mode].append(sample(model_dir, None if mode == "no stores" else store))
                print(f"run {run + 1} {mode}: {samples[mode][-1]['total s']:.2f} s", file=sys.stderr)

    table = Table(title=f"A new process to the planner's first token (median of {args.runs}, interleaved)")
    for column in ("start", "imports s", "load s", "first token s", "total s", "× no stores"):
        table.add_column(column, justify="left" if column == "start" else "right")
    base = statistics.median(s["total s"] for s in samples["no stores"])
    for mode in MODES:
        medians = {key: statistics.median(s[key] for s in samples[mode]) for key in samples[mode][0]}
        table.add_row(mode, *(f"{medians[k]:.2f}" for k in ("imports s", "load s", "first token s", "total s")),
                      f"{base / medians['total s']:.2f}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
