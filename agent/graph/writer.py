"""Writer: findings → report (direct answer first, key points with [n] citations, source list),
then the citation check; unsupported citations are removed from the text and flagged."""

from __future__ import annotations

from deepresearch.agent.prompts import load_prompt
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from .answer_form import NOT_FOUND, answer_choices
from .citations import check_citation
from .context import MalformedOutput, ResearchContext
from .findings import render_findings, unique_findings
from .schemas import ReportPoint, WriterOut, writer_schema
from .state import Citation, ResearchState

STOP_NOTES = {
    "budget_stop": "This run stopped early: {detail}. The answer may be incomplete.",
    "loop_stop": "This run stopped early: {detail} (loop detected). The answer may be incomplete.",
}


def render_report(question: str, answer: str, points: list[ReportPoint], cites: dict[int, Citation],
                  note: str) -> str:
    lines = [f"# {question}", "", f"**Answer:** {answer}", ""]
    if note:
        lines += [f"> {note}", ""]
    for p in points:
        c = cites.get(p.cite)
        if c is None:
            lines.append(f"- {p.text}")
        elif c["verified"]:
            lines.append(f"- {p.text} [{c['n']}]")
        else:
            lines.append(f"- {p.text} _(unsupported: citation removed — {c['reason']})_")
    verified = [c for c in cites.values() if c["verified"]]
    if verified:
        lines += ["", "## Sources", ""]
        for c in verified:
            lines.append(f"[{c['n']}] {c['title'] or c['source']} — {c['source']}")
            lines.append(f"    > {c['quote']}")
    return "\n".join(lines) + "\n"


async def writer(state: ResearchState, runtime: Runtime[ResearchContext]) -> dict:
    ctx = runtime.context
    emit = get_stream_writer()
    findings = unique_findings(state.get("findings", []))[: ctx.settings.max_sources_in_prompt]
    reason = state.get("stop_reason") or "finished"
    note = STOP_NOTES.get(reason, "").format(detail=state.get("stop_detail", ""))
    choices = answer_choices(state["question"])
    if choices:  # the grammar enforces the form; saying it helps the model pick among the options
        note = " ".join(filter(None, [note, "Answer with one of: " + ", ".join(f'"{c}"' for c in choices)
                                      + f', "{NOT_FOUND}".']))
    update: dict = {}
    try:
        out, usage = await ctx.ask_model(
            load_prompt("writer"), WriterOut, writer_schema(len(findings), choices=choices), step="writer",
            question=state["question"], findings=render_findings(findings, ctx.settings.evidence_chars),
            note=f"\nNote: {note}\n" if note else "",
        )
        update["usage"] = usage
        answer, points = out.answer.strip(), out.points
    except MalformedOutput as exc:
        # Fall back to the findings themselves, each with its own citation: honest, if terse.
        answer = "not found" if not findings else findings[0]["claim"]
        points = [ReportPoint(text=f["claim"], cite=i) for i, f in enumerate(findings, 1)]
        update["step_errors"] = [f"writer: {exc}"]

    # Number citations in order of first use; check each against its source's text.
    cites: dict[int, Citation] = {}
    for p in points:
        if p.cite not in cites and 1 <= p.cite <= len(findings):
            cites[p.cite] = check_citation(len(cites) + 1, findings[p.cite - 1], p.text, ctx.toolbox.source_text)
    citations = list(cites.values())
    rejected = sum(1 for c in citations if not c["verified"])
    ctx.store.log_event(ctx.run_id, "citation_check", {
        "checked": len(citations), "verified": len(citations) - rejected, "removed": rejected,
        "citations": citations,
    })
    emit({"event": "report", "verified": len(citations) - rejected, "removed": rejected})
    report = render_report(state["question"], answer, points, cites, note)
    return {**update, "answer": answer, "report": report, "citations": citations}
