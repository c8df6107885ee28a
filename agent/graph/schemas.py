"""Structured actions each role emits, as pydantic models plus the JSON schema the decoder enforces.

Schemas are small and flat so a 135M model can fill them under a grammar; enums carry the choices
that depend on the run (available tools, sentences of a source, finding numbers), so the grammar
rules out unknown tools, invented quotes and citations to nothing.
"""

from __future__ import annotations

from typing import Any

from deepresearch.agent.reader import NOT_FOUND
from pydantic import BaseModel, Field


class PlannedStep(BaseModel):
    goal: str = ""  # not asked of the model (a copyable field it filled with the example's); derived from the query
    tool: str
    query: str = Field(min_length=1)
    done_when: str = ""


class PlanOut(BaseModel):
    steps: list[PlannedStep] = Field(min_length=1)


class ExecutorAction(BaseModel):
    tool: str  # one of the tools, or "done"
    input: str = ""


class FindingOut(BaseModel):
    relevant: bool
    quote: str  # one of the source's sentences, so the finding says what its quote says and nothing else


class BridgeOut(BaseModel):
    search: str  # one of the names offered


class ReportPoint(BaseModel):
    """A key point of the report: the sentence of the finding it cites."""

    text: str = Field(min_length=1)
    cite: int


class WriterOut(BaseModel):
    answer: str
    points: list[int] = Field(default_factory=list)  # the findings the key points quote, by number


def _str(max_len: int) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_len}


# Prose the model writes (plan queries): 1..n characters, none of them an angle bracket,
# a quote, a backslash or a control character. The few-shot examples name things by placeholders
# ("<person>"), so without "<" no output can copy one (measured: one plan query in 100 runs did).
# The length goes into the pattern because xgrammar (and vLLM's check of it) drops min/maxLength
# beside a pattern; xgrammar 0.2.8 with its compile cache on (vLLM's default) fails on a repeat
# count above 128.
PROSE_MAX = 128


def _prose(max_len: int) -> dict[str, Any]:
    if not 1 <= max_len <= PROSE_MAX:
        raise ValueError(f"prose fields hold 1..{PROSE_MAX} characters, not {max_len}")
    return {"type": "string", "pattern": rf'^[^<>"\\\x00-\x1f]{{1,{max_len}}}$'}


# A plan query is a keyword search: 64 characters hold the names and key terms of a pool question.
# Longer queries were the planner copying a recalled note or the question, decoded at one token a pass
# (replayed on the pool corpus: 44 of 134 real plan queries cut at 64, gold documents found 150 -> 151).
PLAN_QUERY_MAX = 64


def plan_schema(tools: list[str], max_steps: int) -> dict[str, Any]:
    step = {
        "type": "object",
        "properties": {"tool": {"type": "string", "enum": tools}, "query": _prose(PLAN_QUERY_MAX)},
        "required": ["tool", "query"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"steps": {"type": "array", "items": step, "minItems": 1, "maxItems": max_steps}},
        "required": ["steps"],
        "additionalProperties": False,
    }


def action_schema(tools: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"tool": {"type": "string", "enum": [*tools, "done"]}, "input": _str(200)},
        "required": ["tool", "input"],
        "additionalProperties": False,
    }


def finding_schema(sentences: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "relevant": {"type": "boolean"},
            "quote": {"type": "string", "enum": sentences},
        },
        "required": ["relevant", "quote"],
        "additionalProperties": False,
    }


def bridge_schema(names: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"search": {"type": "string", "enum": names}},
        "required": ["search"],
        "additionalProperties": False,
    }


def writer_schema(n_findings: int, choices: list[str], max_points: int = 2) -> dict[str, Any]:
    """`choices`: the answers the run allows (the reader's answer options, agent/reader), or none: then "not found"
    is the only one. Whether to abstain is the judgement's (judgement.py: a confidence calibrated on train
    questions), not the writer's: in the evals of sessions 69-70 the 135M writer said "not found" over an offered
    answer five times, three of them a right one at confidence 0.15-0.70 (dev/results/trust-threshold-kinds/).
    The key points are findings chosen by number, not written: the 135M model's own words named what
    their quotes did not, and decoding them was most of the writer's time."""
    props: dict[str, Any] = {"answer": {"type": "string", "enum": list(dict.fromkeys(choices)) or [NOT_FOUND]}}
    required = ["answer"]
    if n_findings:
        point = {"type": "integer", "enum": list(range(1, n_findings + 1))}
        props["points"] = {"type": "array", "items": point, "minItems": 1, "maxItems": max_points}
        required.append("points")
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}
