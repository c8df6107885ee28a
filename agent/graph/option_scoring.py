"""The choice between a question's alternatives (yes/no, "A or B") that the rules leave open, scored by
an adapter trained for it.

comparison.py and shared_property.py decide what the evidence settles by rule. For the rest the writer's
model picks, and the untrained model picks badly: on the 351 dev questions it answered "yes" to all 19
undecided yes/no questions (9 right) and chose the right option of 6 of 20 "A or B" ones
(docs/results/option-choice-probe/). Scored like an answer span, each option by the policy's likelihood
given the options' lead sentences,

    s(o) = mean_t log π(o_t | TEMPLATE(lead(A) lead(B), q), o_<t)

is a choice with a known outcome on every question with a gold answer, so train/answer_choice.py's exact
loss trains it (scripts/train_answer_choice.py --options). Untrained, that likelihood is right for 44 % of
the undecided train questions, below the writer's habit of the first option (59 %); so the graph scores
the options only with an adapter whose metadata names the role OPTION_ROLE, and otherwise the writer keeps
the choice as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepresearch.agent.model.base import ModelError

from .answer_form import YES_NO
from .answer_scoring import EMPTY_LIKELIHOOD, TEMPLATE
from .candidates import EvidenceSentence
from .comparison import OptionChoice, option_sentences
from .shared_property import named_things

if TYPE_CHECKING:
    from .context import ResearchContext

OPTION_ROLE = "option"


def option_context(question: str, choices: list[str],
                   sentences: list[EvidenceSentence]) -> tuple[str, dict[str, EvidenceSentence]]:
    """The text the options are scored against: the lead sentence of each thing compared (the two named
    things of a yes/no question, else the options), else the first sentence read; and those leads by thing."""
    things = named_things(question)[:2] if choices == YES_NO else choices
    leads = {thing: own[0] for thing in things if (own := option_sentences(thing, sentences))}
    context = " ".join(s.text for s in leads.values()) or (sentences[0].text if sentences else "")
    return context, leads


async def score_options(ctx: ResearchContext, question: str, choices: list[str],
                        sentences: list[EvidenceSentence]) -> OptionChoice | None:
    """The option the trained adapter scores best, citing its lead sentence; None when the run's adapter was
    not trained for this choice, nothing was read, or the backend cannot score."""
    if not ctx.policy.adapter.trained_for(OPTION_ROLE):
        return None
    context, leads = option_context(question, choices, sentences)
    if not context:
        return None
    try:
        logprobs = await ctx.model.score(TEMPLATE.format(sentence=context, question=question),
                                           [" " + c for c in choices], adapter=ctx.policy.adapter_for(OPTION_ROLE))
    except ModelError:  # includes ScoringUnsupported: the writer chooses, as without the adapter
        return None
    means = [sum(lps) / len(lps) if lps else EMPTY_LIKELIHOOD for lps in logprobs]
    best = choices[max(range(len(choices)), key=means.__getitem__)]
    lead = leads.get(best)
    return OptionChoice(best, lead.text if lead else "", lead.url if lead else "", "likelihood")
