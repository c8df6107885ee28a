"""Citation check: every cited quote must occur (normalised) in the fetched text of its source."""

from __future__ import annotations

from collections.abc import Callable

from .evidence import quote_supported
from .state import Citation, Finding


def check_citation(n: int, finding: Finding, claim: str, source_text: Callable[[str], str | None]) -> Citation:
    text = source_text(finding["source"])
    if text is None:
        ok, reason = False, "source text not available"
    elif not quote_supported(finding["quote"], text):
        ok, reason = False, "quote not found in the source"
    else:
        ok, reason = True, ""
    return Citation(n=n, source=finding["source"], title=finding["title"], doc_id=finding["doc_id"],
                    quote=finding["quote"], claim=claim, verified=ok, reason=reason)
