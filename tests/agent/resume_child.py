"""Child process for the kill -9 resume test: runs a question and hangs inside the writer's LLM call."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.trace.store import TraceStore

from .conftest import DOCS, agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel


def main() -> None:
    traces, checkpoints, marker = map(Path, sys.argv[1:4])
    base = default_script()

    def script(role, request):
        if role == "writer":
            marker.write_text("writer started")
            time.sleep(600)  # killed here
        return base(role, request)

    runtime = ResearchRuntime(ScriptedModel(script), DictToolbox(DOCS), TraceStore(traces), agent_settings())
    asyncio.run(research("When was Ada Lovelace born?", runtime, options=RunOptions(checkpoint_path=checkpoints)))


if __name__ == "__main__":
    main()
