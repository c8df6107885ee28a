"""After the report: verified findings go to long-term memory, so later runs can recall them."""

from __future__ import annotations

from langgraph.runtime import Runtime

from .context import ResearchContext
from .state import ResearchState


async def memorize(state: ResearchState, runtime: Runtime[ResearchContext]) -> dict:
    ctx = runtime.context
    if "remember" not in ctx.toolbox.names():
        return {}
    for c in state.get("citations", []):
        if c["verified"]:
            text = f"{c['claim']} — \"{c['quote']}\" (question: {state['question']})"
            await ctx.use_tool("remember", {"text": text, "source": c["source"]}, step="memorize")
    return {}
