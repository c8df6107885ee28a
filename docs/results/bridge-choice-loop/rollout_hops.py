"""Per round of a `deepresearch train` run: of the hops offering two names or more (one per run), how often the
name searched finds a gold document not read before the hop, against the features' first name and the best of the
names offered. Each name is searched with the rollouts' own search tool (train/bridge_examples.HopOutcomes).

    .venv/bin/python docs/results/bridge-choice-loop/rollout_hops.py DATA_DIR   (the run's DEEPRESEARCH_DATA_DIR)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections import defaultdict
from pathlib import Path

POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"


async def main(data: Path) -> None:
    from deepresearch.tools.config import ToolSettings
    from deepresearch.train.bridge_examples import HopOutcomes
    from deepresearch.train.environment import rollout_environment

    with (POOL / "questions.jsonl").open() as lines:
        gold = {q["question"]: q.get("gold_doc_ids", []) for q in map(json.loads, lines)}
    rows = sqlite3.connect(data / "traces.db").execute(
        "select r.question, r.tags, e.payload from events e join runs r on r.id = e.run_id "
        "where e.kind = 'decision'").fetchall()
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    async with rollout_environment(ToolSettings(data_dir=data), corpus=POOL / "corpus.jsonl") as env:
        outcomes = HopOutcomes(env.toolbox, env.doc_id_for)
        for question, tags, payload in rows:
            decision = json.loads(payload)
            names = [c["text"] for c in decision.get("candidates") or []]
            if len(names) < 2 or not gold.get(question):
                continue
            unread = set(gold[question]) - {outcomes.doc_id(r) for r in decision["read"]}
            leads = [bool(await outcomes.read_by_hop(name) & unread) for name in names]
            row = counts[int(json.loads(tags)["train_round"])]
            for k, hit in enumerate((True, leads[0], leads[names.index(decision["search"])], any(leads))):
                row[k] += hit
    print("round: hops, first name leads on, searched name leads on, some name leads on")
    for r in sorted(counts):
        print(r, counts[r])


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
