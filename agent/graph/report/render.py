"""A sectioned report's markdown. app/report_view.py reads it back (sections, each line's citations, the lines
removed by the check), so the shapes here are its contract:

    # question
    **Answer:** text [1]                         only when the question has a direct answer
    **How:** quote [2] · quote [1]               a multi-hop answer's chain, both links verified (`chain_line`)
    > note                                       stopped early, or what was searched when nothing answered
    _Written by the model from …_                the style's intro line (WRITTEN_INTRO or EXTRACTIVE_INTRO, or
                                                 `fallback_intro` when a written report gave way to the quotes)
    _Removed by the check: N sentence(s) …_      or _Left out: N quote(s) …_ (extractive), when N > 0
    ## title                                     a section: written sentences one per line, "text [2][3]";
    - quote [2]                                    an extractive section's quotes as items
    ## Removed by the check                      written only: "- text _(unsupported: reason)_"
    ## Sources                                   "[n] title — url" and "    > quote"
"""

from __future__ import annotations

from ..state import Citation
from .lines import ReportSection
from .shape import Style

WRITTEN_INTRO = ("_Written by the model from the findings it was shown; every sentence was checked against the "
                 "quotes it cites, and one they do not support is removed._")
EXTRACTIVE_INTRO = ("_Quotes from the sources read, grouped by what was searched; each was found in its source and is "
                    "about the question or its search._")
# A written report with no sentence to show gives way to the extractive one; its intro says why: "_<reason>, so
# here are quotes …_" (compose.py written_fallback gives the reason).
FALLBACK_TAIL = ("so here are quotes from the sources read instead, grouped by what was searched; each was found in "
                 "its source and is about the question or its search._")
REMOVED_HEADING = "Removed by the check"
EMPTY_SECTION = "_(every sentence of this section was removed by the check)_"


def chain_line(answer_cite: Citation | None, chain_cite: Citation | None) -> list[str]:
    """A multi-hop answer's chain of cited steps, one line under the answer (the key points' report and this one):
    the quote about the question that names the bridge, then the answer's own; only when both links hold."""
    if answer_cite and answer_cite["verified"] and chain_cite and chain_cite["verified"]:
        return [f"**How:** {chain_cite['quote']} [{chain_cite['n']}] · {answer_cite['quote']} [{answer_cite['n']}]",
                ""]
    return []


def fallback_intro(reason: str) -> str:
    return f"_{reason}, {FALLBACK_TAIL}"


def _marks(line_kept: list[int], numbers: dict[int, int]) -> str:
    shown = list(dict.fromkeys(numbers[i] for i in line_kept if i in numbers))
    return "".join(f"[{n}]" for n in shown)


def render_sectioned(question: str, style: Style, answer: str, answer_cite: Citation | None, note: str,
                     sections: list[ReportSection], numbers: dict[int, int], sources: list[Citation],
                     chain_cite: Citation | None = None, fallback: str = "") -> str:
    """`fallback`: why a written report gave way to this extractive one ("" when it did not)."""
    lines = [f"# {question}", ""]
    if answer:
        mark = f" [{answer_cite['n']}]" if answer_cite and answer_cite["verified"] else ""
        lines += [f"**Answer:** {answer}{mark}", "", *chain_line(answer_cite, chain_cite)]
    if note:
        lines += ["> " + line if line else ">" for line in note.split("\n")] + [""]
    dropped = [line for s in sections for line in s.lines if not line.supported]
    if style == "written" or any(s.shown for s in sections):  # no intro over nothing
        intro = fallback_intro(fallback) if fallback else EXTRACTIVE_INTRO
        lines += [WRITTEN_INTRO if style == "written" else intro, ""]
    if dropped and style == "written":
        lines += [f"_Removed by the check: {len(dropped)} sentence(s), listed at the end._", ""]
    elif dropped:
        lines += [f"_Left out: {len(dropped)} quote(s) not about the question or not found in their source._", ""]
    for section in sections:
        if style == "extractive" and not section.shown:
            continue
        lines += [f"## {section.title}", ""]
        for line in section.shown:
            text = f"{line.text} {_marks(line.kept, numbers)}"
            lines.append(f"- {text}" if style == "extractive" else text)
        if not section.shown:
            lines.append(EMPTY_SECTION)
        lines.append("")
    if dropped and style == "written":
        lines += [f"## {REMOVED_HEADING}", ""]
        lines += [f"- {line.text} _(unsupported: {line.reason})_" for line in dropped]
        lines.append("")
    if sources:
        lines += ["## Sources", ""]
        for c in sources:
            lines.append(f"[{c['n']}] {c['title'] or c['source']} — {c['source']}")
            lines.append(f"    > {c['quote']}")
    return "\n".join(lines).rstrip("\n") + "\n"
