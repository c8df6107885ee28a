"""Is a finding about the question, or about the search that found it?

An open question's report groups its findings under what was searched (the plan's steps): "the differences
between A and B" searched A, then B, and a quote about B alone covers too little of the question to count as
about it, yet it is what the step was for. So a finding counts when it is about the question (agent/reader/
relevance.py), or about its step's query when that query is itself about the question — a query the planner
drew from elsewhere (a recalled note, an example) makes nothing relevant.
"""

from __future__ import annotations

from deepresearch.agent.reader import ABOUT, RelevanceReader, texts_about

from ..state import Finding, PlanStep


class FindingRelevance:
    def __init__(self, question: str, reader: RelevanceReader, plan: list[PlanStep]):
        self.reader = reader
        self.steps = {
            s["id"]: RelevanceReader(s["query"], reader.units) for s in plan
            if s.get("query") and s["query"].strip() != question.strip() and texts_about(question, [s["query"]], ABOUT)
        }

    def about_question(self, finding: Finding) -> bool:
        return self.reader.of(finding["source"], finding["quote"], finding["title"]).score >= ABOUT

    def __call__(self, finding: Finding) -> bool:
        if self.about_question(finding):
            return True
        step = self.steps.get(finding["step_id"])
        return step is not None and step.of(finding["source"], finding["quote"], finding["title"]).score >= ABOUT
