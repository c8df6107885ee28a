"""The claim-support check of one line of a sectioned report: a written sentence, or a quoted finding.

A line is supported when
  1. each finding it is shown with has its quote in its source's fetched text and is about the question or
     about the search that found it (a cited finding that fails either is dropped from the line), and
  2. the line says something, and every name (capitalised word), number and date of it occurs in the quotes of
     those findings or their sources' titles (graph/citations.py `unsupported_terms`).
A sentence that fails is not shown: the report says how many were removed and why (render.py). As for the key
points, check 2 is literal: it catches a sentence naming what its quotes never mention, not one that twists them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from deepresearch.agent.reader import quote_supported

from ..citations import NOT_ABOUT, says_something, unsupported_terms
from ..state import Finding
from .lines import ReportLine

# Words that open a sentence capitalised without naming anything: read in lower case, so that "Unlike …" or
# "Overall, …" is not taken for a name its quotes must contain.
_OPENERS = frozenset({
    "unlike", "like", "moreover", "furthermore", "additionally", "overall", "compared", "each", "another", "other",
    "similarly", "likewise", "instead", "meanwhile", "thus", "therefore", "finally", "first", "second", "third",
    "later", "earlier", "today", "then", "neither", "either", "such", "though", "whereas", "despite", "besides",
    "beyond", "together", "all", "only", "several", "originally", "initially", "notably", "according", "based",
})


def plain_opening(sentence: str) -> str:
    """The sentence with its first word in lower case when that word names nothing (`_OPENERS`)."""
    m = re.match(r"\s*(\w+)", sentence)
    if m and m.group(1).lower() in _OPENERS:
        return sentence[:m.start(1)] + m.group(1).lower() + sentence[m.end(1):]
    return sentence


def finding_problem(finding: Finding, source_text: Callable[[str], str | None], about: bool) -> str:
    """Why a cited finding cannot support anything ("" when it can)."""
    text = source_text(finding["source"])
    if text is None:
        return "source text not available"
    if not quote_supported(finding["quote"], text):
        return "quote not found in the source"
    return "" if about else NOT_ABOUT


def check_line(text: str, cites: list[int], findings: list[Finding], source_text: Callable[[str], str | None],
               about: Callable[[Finding], bool]) -> ReportLine:
    """`cites`: places in `findings`; `about(finding)`: is it about the question or its search."""
    line = ReportLine(text=text, cites=list(dict.fromkeys(i for i in cites if 0 <= i < len(findings))))
    for i in line.cites:
        problem = finding_problem(findings[i], source_text, about(findings[i]))
        if problem:
            line.failed[i] = problem
        else:
            line.kept.append(i)
    if not line.cites:
        line.reason = "it cites no finding"
    elif not line.kept:
        line.reason = "its quotes fail the check (" + "; ".join(dict.fromkeys(line.failed.values())) + ")"
    elif not says_something(text):
        line.reason = "it says nothing a quote could support"
    elif missing := unsupported_terms(plain_opening(text), " ".join(findings[i]["quote"] for i in line.kept),
                                      " ".join(findings[i]["title"] for i in line.kept)):
        line.reason = "its quotes do not support it (" + ", ".join(missing[:4]) + " not in them)"
    line.supported = not line.reason
    return line
