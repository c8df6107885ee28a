"""Adding a tool is its own file plus its registration: a calculator, defined here and registered in the
toolbox, is offered to the planner and the executors, called with its own arguments, observed in its
own words, and the sources it surfaces become evidence — with no edit to the graph."""

from __future__ import annotations

import ast
import operator
from typing import Any, ClassVar

from deepresearch.tools.base import Surfaced, Tool, ToolFailure
from pydantic import BaseModel, Field

from .conftest import agent_settings, default_script, user_text
from .fakes import ScriptedModel
from .test_graph import run

# --- the tool's file ---------------------------------------------------------------------------------
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


class CalcInput(BaseModel):
    expression: str = Field(min_length=1, max_length=200, description="arithmetic, e.g. 6*7")


class CalcOutput(BaseModel):
    expression: str
    value: float


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ToolFailure("bad_expression", "only numbers and + - * / are allowed")


class Calculator(Tool[CalcInput, CalcOutput]):
    name: ClassVar[str] = "calculator"
    description: ClassVar[str] = "Evaluate an arithmetic expression."
    input_model: ClassVar[type[CalcInput]] = CalcInput
    plannable: ClassVar[bool] = True

    async def run(self, args: CalcInput) -> CalcOutput:
        return CalcOutput(expression=args.expression, value=_evaluate(ast.parse(args.expression, mode="eval").body))

    def observe(self, value: str, output: dict[str, Any]) -> str:
        return f"calculator({value!r}) = {output['value']:g}"

    def sources(self, output: dict[str, Any]) -> list[Surfaced]:
        text = f"The value of {output['expression']} is {output['value']:g}."
        return [Surfaced(url=f"calc:{output['expression']}", title="calculator", text=text)]


# --- its use -----------------------------------------------------------------------------------------
async def test_the_planner_can_plan_a_new_tool_and_its_sources_become_evidence(toolbox, store):
    toolbox.tools["calculator"] = Calculator()  # the registration
    offered = []

    def script(role, request):
        if role == "planner":
            offered.append(request.json_schema["properties"]["steps"]["items"]["properties"]["tool"]["enum"])
            return {"steps": [{"goal": "compute", "tool": "calculator", "query": "6*7", "done_when": "computed"}]}
        return default_script()(role, request)

    result = await run(ScriptedModel(script), toolbox, store)
    assert offered == [["search", "open", "calculator"]]
    assert ("calculator", {"expression": "6*7"}) in toolbox.invocations
    calc = [e.payload for e in store.events(result.run_id, "finding") if e.payload["source"] == "calc:6*7"]
    assert calc and calc[0]["quote"] == "The value of 6*7 is 42."
    assert result.status == "finished"


async def test_an_executor_can_choose_a_new_tool_and_reads_its_observation(toolbox, store):
    toolbox.tools["calculator"] = Calculator()
    prompts: list[str] = []

    def script(role, request):
        if role == "planner":
            return {"steps": [{"goal": "count", "tool": "search", "query": "zzz nothing", "done_when": "counted"}]}
        if role == "executor":
            prompts.append(user_text(request))
            assert "calculator" in request.json_schema["properties"]["tool"]["enum"]
            return {"tool": "calculator", "input": "2+2"} if len(prompts) == 1 else {"tool": "done", "input": "ok"}
        if role == "extractor" and "value of" in user_text(request):
            return {"relevant": False, "quote": request.json_schema["properties"]["quote"]["enum"][0]}
        return default_script()(role, request)

    await run(ScriptedModel(script), toolbox, store, settings=agent_settings(max_executor_turns=3, max_rounds=1))
    assert ("calculator", {"expression": "2+2"}) in toolbox.invocations
    assert "calculator('2+2') = 4" in prompts[1]  # the tool's own observation, for the next decision
