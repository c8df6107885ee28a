"""After the report: verified findings go to long-term memory, so later runs can recall them.

Only from a run that finished and whose direct answer is backed by a verified citation, and only its verified
citations: "verified" includes being about the question (agent/reader/trust/relevance.py), so a run stopped early, an
answer no checked quote supports ("not found", a guess held back) and a quote about something else never come back
as a "note from earlier research". Each note carries its run's id: rating the run as wrong forgets it.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from ..context import ResearchContext
from ..state import Citation, ResearchState


def answer_is_verified(answer: str, citations: list[Citation]) -> bool:
    """Whether a verified citation supports the direct answer itself (its point is the answer)."""
    key = " ".join(answer.split()).casefold()
    return bool(key) and any(c["verified"] and " ".join(c["claim"].split()).casefold() == key for c in citations)


def worth_remembering(state: ResearchState) -> bool:
    finished = (state.get("stop_reason") or "finished") == "finished"
    return finished and answer_is_verified(state.get("answer", ""), state.get("citations", []))


async def memorize(state: ResearchState, runtime: Runtime[ResearchContext]) -> dict:
    ctx = runtime.context
    if "remember" not in ctx.toolbox.names() or not worth_remembering(state):
        return {}
    for c in state.get("citations", []):
        if c["verified"]:
            text = f"{c['claim']} — \"{c['quote']}\" (question: {state['question']})"
            await ctx.use_tool("remember", {"text": text, "source": c["source"], "run_id": ctx.run_id},
                               step="memorize")
    return {}
