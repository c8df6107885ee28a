"""Child process of test_resume_kill: a slow closed-book eval that the test SIGKILLs mid-way."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.run.runner import EvalRuntime, EvalSelection, run_eval

from tests.evals.scripted_model import ScriptedModel


async def main(questions: Path, out_dir: Path, db: Path, call_log: Path) -> None:
    answers = {}
    for line in questions.read_text().splitlines():
        record = json.loads(line)
        answers[record["question"]] = record["answer"]
    store = TraceStore(db)
    model = ScriptedModel(answers, delay_s=0.25, call_log=call_log)
    runtime = EvalRuntime(model, store, AgentSettings(), evals=EvalSettings(concurrency=2))
    await run_eval(EvalSelection(questions=questions), runtime, systems=["closed-book"], out_dir=out_dir,
                   progress=False)
    store.close()


if __name__ == "__main__":
    asyncio.run(main(*(Path(a) for a in sys.argv[1:5])))
