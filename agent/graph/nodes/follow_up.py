"""Follow-up hop: one more search for a multi-hop question, for the bridge entity the evidence names.

The names come from the sentences read so far (the best-ranked names the question does not mention);
the best-ranked one is searched, or (setting agent.bridge_choice = "model") the model chooses which
one the answer depends on, under a grammar that offers only those names; with an adapter trained for
the choice, the names are scored by it instead (agent/graph/scoring.py). With agent.bridge_hops > 1 the first
that many names (by rank or by the adapter's scores) are searched at once, and the writer keeps the answer
of the hop whose pick scores highest.
Questions whose answer form is fixed need no hop: a yes/no question none, an "A or B" question a search
for each option not searched yet, so the evidence can decide between them. An open question (a report: explain,
compare, summarise) searches each thing it covers the same way ("the differences between A and B": A and B) and
makes no bridge hop, which looks for the one name an answer span depends on.
"""

from __future__ import annotations

from typing import Literal

from deepresearch.agent.prompts import load_prompt
from deepresearch.agent.reader import (
    LIKELIHOOD_WEIGHT,
    YES_NO,
    Candidate,
    EvidenceSentence,
    RelevanceReader,
    answer_choices,
    answer_confidence,
    answer_options,
    bridge_options,
    by_relevance,
    normalise,
    question_kind,
    question_parts,
    rest_of_question,
)
from deepresearch.tools.untrusted import fence_untrusted
from langgraph.runtime import Runtime
from langgraph.types import Command

from ..context import MalformedOutput, ResearchContext
from ..events import BridgeChosen, HopSkipped, ScoredCandidate
from ..findings import render_findings, unique_findings
from ..reading import read_sentences
from ..schemas import BridgeOut, bridge_schema
from ..scoring import bridge_likelihoods
from ..state import PlanStep, ResearchState, Usage


async def follow_up(state: ResearchState, runtime: Runtime[ResearchContext]) -> Command[
    Literal["coordinator", "writer"]
]:
    """A step searching the bridge entity goes back to the coordinator to be dispatched; with no hop to
    make, the run is finished and the writer answers."""
    choices = answer_choices(state["question"])
    is_open = question_kind(state["question"]) == "open"
    if choices is None and is_open:
        choices = question_parts(state["question"]) or None
    if choices is not None and choices != YES_NO:
        steps = option_steps(state, choices, runtime.context)
        if steps:
            return Command(goto="coordinator", update={"plan": steps})
    steps, usage = await bridge_steps(state, runtime.context) if not is_open else ([], None)
    update: dict = {"usage": usage} if usage else {}
    if not steps:
        return Command(goto="writer", update={**update, "stop_reason": "finished", "stop_detail": ""})
    return Command(goto="coordinator", update={**update, "plan": steps})


def searched(state: ResearchState) -> set[str]:
    """What the run has searched for so far, normalised."""
    return {normalise(c["input"]) for c in state.get("tool_calls", []) if c["tool"] == "search"}


def option_steps(state: ResearchState, options: list[str], ctx: ResearchContext) -> list[PlanStep]:
    """For an "A or B" question: a search for each option not searched yet, so that both options'
    own sources are read and the evidence can decide between them (agent/reader/answers/comparison.py). For an open
    question, the same for each thing it covers, so the report has each one's own sources."""
    made = searched(state)
    plan = state.get("plan", [])
    first = max((s["id"] for s in plan), default=0) + 1
    steps: list[PlanStep] = []
    for option in options:
        if normalise(option) in made:
            continue
        step = PlanStep(id=first + len(steps), goal=f"find: {option}", tool="search", query=option,
                        done_when="a source describes it", status="pending", round=-1)
        ctx.record(BridgeChosen(search=option, options=options, step=step))
        steps.append(step)
    return steps


async def bridge_steps(state: ResearchState, ctx: ResearchContext) -> tuple[list[PlanStep], Usage | None]:
    """The steps that search bridge entities (none: no hop), `agent.bridge_hops` of them at most, and the usage
    of the choice's LLM call."""
    if answer_choices(state["question"]) is not None:
        return [], None
    sentences = read_sentences(state.get("sources", []), ctx.toolbox.source_text)
    if ctx.settings.hop_skip_confidence > 0 and (settled := first_answer(
            state["question"], sentences, ctx.settings.answer_pool)) is not None:
        answer, confidence = settled
        if confidence >= ctx.settings.hop_skip_confidence:
            ctx.record(HopSkipped(answer=answer, confidence=confidence))
            return [], None
    offered = bridge_options(state["question"], sentences, searched(state))
    names = [c.text for c in offered]
    if not names:
        return [], None
    usage = None
    likelihood = await bridge_likelihoods(ctx, state["question"], offered)
    scores = [c.score + LIKELIHOOD_WEIGHT * ll for c, ll in zip(offered, likelihood, strict=True)] \
        if likelihood is not None else None
    also: list[str] = []  # the further names searched when agent.bridge_hops > 1, best first
    if scores is not None:  # an adapter trained for this choice makes it
        ranked = [names[i] for i in sorted(range(len(names)), key=lambda i: -scores[i])]
        bridge, also = ranked[0], ranked[1:ctx.settings.bridge_hops]
    elif len(names) == 1 or ctx.settings.bridge_choice == "rank":
        bridge, also = names[0], names[1:ctx.settings.bridge_hops]
    else:
        findings = unique_findings(state.get("findings", []))[: ctx.settings.max_sources_in_prompt]
        try:
            # step="coordinator": the call's identity, and with it its seed, is the coordinator's as before
            out, usage = await ctx.ask_model(
                load_prompt("coordinator"), BridgeOut, bridge_schema(names), step="coordinator", max_tokens=32,
                question=state["question"], findings=render_findings(findings, ctx.settings.evidence_chars),
                # The names are spans of the pages' text: fenced (the schema's enum still holds the model to them).
                names=fence_untrusted("\n".join(f"- {n}" for n in names), source="the sources read in this run"),
            )
        except MalformedOutput:
            return [], None
        bridge = out.search
    first = max((s["id"] for s in state.get("plan", [])), default=0) + 1
    steps = [PlanStep(id=first + i, goal=f"find: {name}", tool="search", query=name,
                      done_when="the missing fact is found", status="pending", round=-1, bridge=name,
                      rest=rest_about(state["question"], name, offered, sentences))
             for i, name in enumerate([bridge, *also])]
    # What the trainer needs to score the names again (train/bridge_examples.py); likelihood 0 when unscored.
    logged = [ScoredCandidate(c.text, features=c.score, likelihood=round(ll, 4), quote=c.quote)
              for c, ll in zip(offered, likelihood or [0.0] * len(offered), strict=True)]
    # One decision, the first name's: the trainer learns which name leads on from it (train/bridge_examples.py).
    ctx.record(BridgeChosen(search=bridge, options=names, step=steps[0], scores=scores or [], candidates=logged,
                            read=list(dict.fromkeys(s["doc_id"] or s["url"] for s in state.get("sources", [])))))
    return steps, usage


def rest_about(question: str, name: str, offered: list[Candidate], sentences: list[EvidenceSentence]) -> str:
    """What the question still asks once `name` is known: its words the sentence that offered the name leaves
    open (the writer asks the hop's evidence about them: agent/graph/last_hop.py)."""
    cand = next((c for c in offered if c.text == name), None)
    if cand is None:  # the model chose a name outside the options (the grammar forbids it): nothing is covered
        return rest_of_question(question, "", "", name)
    title = next((s.title for s in sentences if s.url == cand.url), "")
    return rest_of_question(question, cand.quote, title, name)


def first_answer(question: str, sentences: list[EvidenceSentence], pool: int) -> tuple[str, float] | None:
    """The best answer of the evidence read so far and how likely it is right, by the writer's own measure
    (agent/reader/trust/confidence.py) before the policy's likelihood: no LLM call."""
    reader = RelevanceReader(question, sentences)
    candidates = by_relevance(answer_options(question, reader.units, pool=pool).candidates, reader)
    if not candidates:
        return None
    best = candidates[0]
    return best.text, answer_confidence(best, candidates, reader.of_answer(best.text, best.url, best.quote).score)
