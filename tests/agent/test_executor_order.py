"""Sources are read in parallel; what a step keeps does not depend on which read finished first."""

from __future__ import annotations

import asyncio
from typing import Any

from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.tools.base import ToolOutcome

from .conftest import agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel


class SlowFirstPage(DictToolbox):
    """Opening `slow` takes longer than opening any other page."""

    def __init__(self, docs, slow: str):
        super().__init__(docs)
        self.slow = slow
        self.opened: list[str] = []  # in the order the opens started

    async def invoke(self, name: str, raw: dict[str, Any]) -> ToolOutcome:
        if name == "open":
            self.opened.append(raw["url"])
        if name == "open" and raw["url"].endswith("/" + self.slow):
            await asyncio.sleep(0.2)
        return await super().invoke(name, raw)


async def test_findings_keep_the_search_rank_when_the_first_page_arrives_last(docs, store):
    toolbox = SlowFirstPage(docs, slow="d2")  # the question's search ranks d2 first, d1 second
    model = ScriptedModel(default_script(("Analytical Engine designed",)))
    runtime = ResearchRuntime(model=model, toolbox=toolbox, store=store,
                              settings=agent_settings(max_rounds=1, max_plan_steps=1))
    result = await research("Who designed the Analytical Engine?", runtime, RunPolicy(), RunOptions())
    finished = [raw["url"] for name, raw in toolbox.invocations if name == "open"]
    assert toolbox.opened[:2] == ["local://test/d2", "local://test/d1"] and finished[0] != "local://test/d2"
    found = [e.payload["finding"]["source"] if "finding" in e.payload else e.payload["source"]
             for e in store.events(result.run_id, "finding")]
    assert found[:2] == ["local://test/d2", "local://test/d1"]
