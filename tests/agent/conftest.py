from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from deepresearch.agent.config import AgentSettings, BudgetSettings
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.trace.store import TraceStore

from .fakes import DictToolbox

DOCS = {
    "d1": ("Ada Lovelace", "Ada Lovelace was an English mathematician. She was born in London in 1815. "
                           "She wrote the first published algorithm for Babbage's Analytical Engine."),
    "d2": ("Analytical Engine", "The Analytical Engine was a proposed mechanical computer. "
                                "It was designed by Charles Babbage in 1837."),
    "d3": ("London", "London is the capital of England. It lies on the River Thames."),
}


@pytest.fixture
def docs() -> dict[str, tuple[str, str]]:
    return dict(DOCS)


@pytest.fixture
def toolbox(docs) -> DictToolbox:
    return DictToolbox(docs)


@pytest.fixture
def store(tmp_path: Path) -> TraceStore:
    return TraceStore(tmp_path / "traces.db")


def agent_settings(**budget) -> AgentSettings:
    return AgentSettings(budget=BudgetSettings(**budget))


def user_text(request) -> str:
    return request.messages[-1].content


def quote_options(request) -> list[str]:
    return request.json_schema["properties"]["quote"]["enum"]


def first_matching(options: list[str], word: str) -> str:
    return next((o for o in options if word.lower() in o.lower()), options[0])


def plan_of(*queries: str) -> dict:
    return {"steps": [{"goal": f"find {q}", "tool": "search", "query": q, "done_when": "found"} for q in queries]}


def default_script(plan_queries=("Ada Lovelace born", "Analytical Engine designed")):
    """A sensible model: plans the given searches, finds the sentence with a year, cites everything."""

    def script(role, request):
        if role == "planner":
            return plan_of(*plan_queries)
        if role == "extractor":
            options = quote_options(request)
            best = next((o for o in options if re.search(r"\b1[0-9]{3}\b", o)), options[0])
            return {"relevant": True, "quote": best}
        if role == "executor":
            return {"tool": "done", "input": "ok"}
        if role == "coordinator":
            return {"search": request.json_schema["properties"]["search"]["enum"][0]}
        if role == "writer":
            n = len(request.json_schema["properties"].get("points", {}).get("items", {}).get("enum", []))
            options = request.json_schema["properties"]["answer"]["enum"]
            answer = "1815" if "1815" in options else options[0]
            if not n:
                return {"answer": answer}
            return {"answer": answer, "points": list(range(1, min(n, 2) + 1))}
        raise AssertionError(role)

    return script


def dumps(x) -> str:
    return json.dumps(x)


async def run(model, toolbox, store, settings=None, question="When was Ada Lovelace born?", policy=RunPolicy(),
              **options):
    runtime = ResearchRuntime(model=model, toolbox=toolbox, store=store, settings=settings or agent_settings())
    return await research(question, runtime, policy, RunOptions(**options))
