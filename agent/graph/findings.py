"""Findings as the model sees them: de-duplicated and numbered."""

from __future__ import annotations

from deepresearch.agent.reader import normalise
from deepresearch.tools.untrusted import fence_untrusted

from .state import Finding


def unique_findings(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        key = (f["source"], normalise(f["quote"]))
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def render_findings(findings: list[Finding], chars: int) -> str:
    if not findings:
        return "(no findings)"
    # Quotes and titles are the pages' text: one fence around them all.
    lines = "\n".join(f"[{i}] \"{f['quote'][:chars]}\" ({f['title']})" for i, f in enumerate(findings, 1))
    return fence_untrusted(lines, source="the sources read in this run")
