"""Is a finding about the question, or about the search that found it?

An open question's report groups its findings under what was searched (the plan's steps): "the differences
between A and B" searched A, then B, and a quote about B alone covers too little of the question to count as
about it, yet it is what the step was for. So a finding counts when it is about the question (agent/reader/
relevance.py), or about its step's query when that query is itself about the question — a query the planner
drew from elsewhere (a recalled note, an example) makes nothing relevant, nor does a query of only the question's
names unless the question compares the things it names. And the quote must speak of what it is about itself, or
stand on that thing's own page (`speaks_of`), not only on a page whose title names it: under
"Describe Lisa Simpson", "It was directed by Mike B. Anderson" on the page "The Secret War of Lisa Simpson" is
about an episode, not about her. A document's title line ("Kettle & Mash Homebrew Club · entry pack, version 1 ·
Feb.") and a note's front matter ("**Present:** … + 6 members") name the subject and the question's words and say
nothing: they are no quote. Nor is a line that only leads in to what follows it ("Agreed prices from 1 April 2024:"):
what it introduces is in the lines after it, which are quoted on their own.
"""

from __future__ import annotations

from deepresearch.agent.reader import (
    ABOUT,
    RelevanceReader,
    asks_beyond_names,
    is_masthead,
    question_parts,
    speaks_of,
    texts_about,
)

from ..state import Finding, PlanStep


def leads_in(quote: str) -> bool:
    """A line that ends with a colon introduces the lines after it ("Agreed prices from 1 April 2024:") and says
    nothing of its own."""
    return quote.rstrip(" *_").endswith(":")


class FindingRelevance:
    def __init__(self, question: str, reader: RelevanceReader, plan: list[PlanStep]):
        self.question, self.reader = question, reader
        compares = bool(question_parts(question))
        self.steps = {
            s["id"]: (s["query"], RelevanceReader(s["query"], reader.units)) for s in plan
            if s.get("query") and s["query"].strip() != question.strip() and texts_about(question, [s["query"]], ABOUT)
            and (compares or asks_beyond_names(question, s["query"]))
        }

    def __call__(self, finding: Finding) -> bool:
        source, quote, title = finding["source"], finding["quote"], finding["title"]
        # The document's title line ("Volunteer Handbook · Revision 3 · 03/2024") and its front matter ("**Date:** …
        # **Present:** …") say who, when and where of the document, nothing itself.
        if is_masthead(quote) or self.reader.is_front_matter(source, quote) or leads_in(quote):
            return False
        if self.reader.of(source, quote, title).score >= ABOUT and speaks_of(self.question, quote, title):
            return True
        query, step = self.steps.get(finding["step_id"], ("", None))
        return step is not None and step.of(source, quote, title).score >= ABOUT and speaks_of(query, quote, title)
