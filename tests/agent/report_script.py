"""A scripted "capable" model for the report tests: it writes an outline and sections from the findings it is
shown, some sentences faithful to their quotes and one per section naming what no quote says.

Over any corpus: the sentences are built from the numbered findings in the prompt, so the script works on the
test documents here and on the demo index (tests/app/test_report_sections.py)."""

from __future__ import annotations

import re

from .conftest import first_matching, plan_of, quote_options
from .fakes import ScriptedModel

OPEN_QUESTION = "What are the main differences between the Analytical Engine and the Difference Engine?"
DOCS = {
    "ae": ("Analytical Engine", "The Analytical Engine was a proposed mechanical general-purpose computer designed by "
                                "Charles Babbage. It could be programmed with punched cards. "
                                "It was first described in 1837."),
    "de": ("Difference Engine", "The Difference Engine is an automatic mechanical calculator designed to tabulate "
                                "polynomial functions. Charles Babbage began work on it in 1822."),
    "lo": ("London", "London is the capital of England. It lies on the River Thames."),
}
# A sentence no quote supports: names and a year the sources never mention.
INVENTED = "It was finished by Ada Lovelace in 1843."
_FINDING = re.compile(r'^\[(\d+)\] "(.*)" \((.*)\)$', re.MULTILINE)


def shown_findings(request) -> dict[int, tuple[str, str]]:
    """The numbered findings of an outliner or reporter prompt: number → (quote, title)."""
    return {int(n): (quote, title) for n, quote, title in _FINDING.findall(request.messages[-1].content)}


def faithful(quote: str) -> str:
    """A sentence in other words that names and dates only what the quote does."""
    return "In short, " + quote[0].lower() + quote[1:]


def capable_script(plan: tuple[str, ...] = ("Charles Babbage engines",), invent: bool = True,
                   faithful_too: bool = True):
    """`invent`: each section gets the sentence no quote supports; `faithful_too`: and one faithful sentence per
    finding (False: the invented sentence alone, so the check leaves nothing written to show)."""

    def script(role, request):
        if role == "planner":
            return plan_of(*plan)
        if role == "extractor":
            return {"relevant": True, "quote": first_matching(quote_options(request), "designed")}
        if role == "executor":
            return {"tool": "done", "input": "ok"}
        if role == "coordinator":
            return {"search": request.json_schema["properties"]["search"]["enum"][0]}
        if role == "writer":
            options = request.json_schema["properties"]["answer"]["enum"]
            points = request.json_schema["properties"].get("points")
            return {"answer": options[0], **({"points": [1]} if points else {})}
        if role == "outliner":
            numbers = sorted(shown_findings(request))
            by_title: dict[str, list[int]] = {}
            for n, (_, title) in shown_findings(request).items():
                by_title.setdefault(title, []).append(n)
            return {"sections": [{"title": f"About the {t}", "findings": ns} for t, ns in by_title.items()]
                    or [{"title": "Findings", "findings": numbers[:1]}]}
        if role == "reporter":
            allowed = request.json_schema["properties"]["sentences"]["items"]["properties"]["cites"]["items"]["enum"]
            findings = shown_findings(request)
            sentences = [{"text": faithful(findings[n][0]), "cites": [n]} for n in allowed if n in findings
                         and faithful_too]
            if invent:
                sentences.append({"text": INVENTED, "cites": [allowed[0]]})
            return {"sentences": sentences}
        raise AssertionError(role)

    return script


class CapableModel(ScriptedModel):
    """A model that writes: `agent.report.style = auto` gives it the written report."""

    writes = True


def capable_model(**kwargs) -> CapableModel:
    return CapableModel(capable_script(**kwargs))
