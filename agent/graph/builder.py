"""The graph: planner → (approve_plan) → coordinator ⇄ executors (parallel, via Send) / follow_up → writer →
memorize. Its picture, drawn from the compiled graph, is in docs/architecture.md (a test keeps them equal)."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from .context import ResearchContext
from .nodes.approval import approve_plan
from .nodes.coordinator import coordinator
from .nodes.executor import executor
from .nodes.follow_up import follow_up
from .nodes.memorize import memorize
from .nodes.planner import planner
from .nodes.writer import writer
from .state import ResearchState


def build_graph(checkpointer: Checkpointer = None) -> CompiledStateGraph:
    g = StateGraph(ResearchState, context_schema=ResearchContext)
    g.add_node("planner", planner)
    g.add_node("approve_plan", approve_plan)
    g.add_node("coordinator", coordinator)
    g.add_node("executor", executor)
    g.add_node("follow_up", follow_up)
    g.add_node("writer", writer)
    g.add_node("memorize", memorize)
    g.add_edge(START, "planner")
    g.add_edge("executor", "coordinator")  # fan-in: the coordinator runs once all of a round's executors end
    g.add_edge("writer", "memorize")
    g.add_edge("memorize", END)
    return g.compile(checkpointer=checkpointer)


def mermaid() -> str:
    """The compiled graph as Mermaid: what docs/architecture.md shows."""
    return build_graph().get_graph().draw_mermaid().strip()


if __name__ == "__main__":  # python -m deepresearch.agent.graph.builder: the picture for the docs
    print(mermaid())
