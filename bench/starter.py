"""Starter-adapter bench: what answering with the packaged starter adapter costs a user's `ask`.

Two tables, measured in one run:

1. Loading the adapter into the embedded engine, in a fresh process each sample: through peft (a
   transformers model built on the lean weights, then wrapped: the way every adapter loaded before) against
   reading a plain LoRA's files straight into the lean forward's products (embedded/loaders/lora_file.py, now).
2. The README's question end to end (`deepresearch ask --offline --auto-approve …`, a fresh data directory
   each time, wall clock of the whole command) on the base model against the starter adapter, interleaved.

    .venv/bin/python bench/starter.py --runs 3        # ~3 min
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
QUESTION = "In what year did the playwright who wrote The City Heiress die?"

LOAD_CHILD = """
import json, sys, time
from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
from deepresearch.train.adapters.starter import packaged_starter
from pathlib import Path
model = EmbeddedChatModel.load(Path(sys.argv[1]))
adapters = model._adapters
started = time.perf_counter()
load = adapters._load_into_peft if sys.argv[2] == "peft" else adapters.load
model._engine.call(lambda: load("starter", packaged_starter()), "starter").result()
print(json.dumps({"load s": time.perf_counter() - started}))
model._engine.close()
"""
LOADS = ("through peft", "from its files")


def load_sample(model_dir: Path, way: str) -> float:
    result = subprocess.run([sys.executable, "-c", LOAD_CHILD, str(model_dir), "peft" if way == LOADS[0] else "file"],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"error: the load sample failed:\n{result.stderr.strip()[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])["load s"]


def ask_sample(starter: bool) -> tuple[float, str]:
    with tempfile.TemporaryDirectory(prefix="bench-starter-") as data:
        out = Path(data) / "result.json"
        env = {**os.environ, "DEEPRESEARCH_DATA_DIR": data, "DEEPRESEARCH_MODEL__STARTER_ADAPTER": str(starter).lower()}
        started = time.perf_counter()
        result = subprocess.run([str(Path(sys.executable).with_name("deepresearch")), "ask", "--offline",
                                 "--auto-approve", "--json", "--out", str(out), QUESTION],
                                capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        if result.returncode not in (0, 3):
            raise SystemExit(f"error: ask failed:\n{result.stderr.strip()[-2000:]}")
        return wall, json.loads(out.read_text())["answer"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="samples per way (default 3)")
    args = parser.parse_args()
    if args.runs < 1:
        raise SystemExit("error: --runs must be at least 1")

    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train.adapters.starter import packaged_starter
    from rich.console import Console
    from rich.table import Table

    if packaged_starter() is None:
        raise SystemExit("error: this install ships no starter adapter (deepresearch/train/adapters/starter_adapter/)")
    model_dir = embedded_model_dir(load_settings().cache_dir)
    loads: dict[str, list[float]] = {way: [] for way in LOADS}
    asks: dict[str, list[float]] = {"base model": [], "starter adapter": []}
    answers: dict[str, set[str]] = {way: set() for way in asks}
    for run in range(args.runs):
        for way in LOADS if run % 2 == 0 else LOADS[::-1]:
            loads[way].append(load_sample(model_dir, way))
            print(f"run {run + 1} load {way}: {loads[way][-1]:.2f} s", file=sys.stderr)
        for way in asks if run % 2 == 0 else list(asks)[::-1]:
            wall, answer = ask_sample(way == "starter adapter")
            asks[way].append(wall)
            answers[way].add(answer)
            print(f"run {run + 1} ask on the {way}: {wall:.1f} s, {answer!r}", file=sys.stderr)

    console = Console(width=120)
    table = Table(title=f"Loading the starter adapter into the embedded engine (median of {args.runs})")
    for column in ("way", "load s", "× through peft"):
        table.add_column(column, justify="left" if column == "way" else "right")
    base = statistics.median(loads[LOADS[0]])
    for way in LOADS:
        table.add_row(way, f"{statistics.median(loads[way]):.2f}", f"{base / statistics.median(loads[way]):.1f}")
    console.print(table)
    table = Table(title=f"`ask --offline` on the README's question, wall clock (median of {args.runs}, interleaved)")
    for column in ("answers with", "wall s", "× base model", "answers"):
        table.add_column(column, justify="left" if column in ("answers with", "answers") else "right")
    base = statistics.median(asks["base model"])
    for way, walls in asks.items():
        table.add_row(way, f"{statistics.median(walls):.1f}", f"{statistics.median(walls) / base:.2f}",
                      ", ".join(sorted(answers[way])))
    console.print(table)


if __name__ == "__main__":
    main()
