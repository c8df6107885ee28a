"""Child process for the shared checkpoint store test: runs questions with checkpoints on, in one data dir."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.trace.store import TraceStore

from .conftest import DOCS, agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel


async def main(data: Path, runs: int) -> None:
    store = TraceStore(data / "traces.db")
    runtime = ResearchRuntime(ScriptedModel(default_script()), DictToolbox(dict(DOCS)), store, agent_settings())
    for _ in range(runs):
        result = await research("When was Ada Lovelace born?", runtime,
                                options=RunOptions(checkpoint_path=data / "checkpoints.db"))
        assert result.status == "finished", result
    store.close()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
