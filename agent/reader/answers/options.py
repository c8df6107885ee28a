"""The reader's answer to "what may the answer be, given this evidence?", for the writer and the follow-up hop.

The writer's direct answer is chosen, not written: one of the question's answer-form choices (yes/no, "A or
B" — or the one the evidence decides for: shared_property.py, comparison.py), one of the spans of the
evidence best ranked for the question (candidates.py), or "not found". The follow-up hop of a multi-hop
question searches one of the names of the evidence ranked as its bridge.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ..document.evidence import EvidenceSentence
from ..document.text import normalise
from ..language.answer_form import YES_NO, answer_choices
from ..language.phrasing import cased_like, direct_question
from .candidates import BRIDGE_W, Candidate, asks_person, rank_candidates
from .comparison import OptionChoice, choose_option
from .offices import is_office
from .shared_property import decide_shared
from .yes_no import decide_polarity

# Names offered to the follow-up decision. The rule takes the first whatever the count; an adapter trained for
# the choice picks a name that leads on for 44 / 49 / 47 of 198 held-out train questions at 3 / 5 / 8 names.
BRIDGE_OPTIONS = 5


@dataclass(frozen=True)
class AnswerOptions:
    """What the evidence allows as the answer besides "not found"."""

    choices: list[str] | None  # what the question's form allows (yes/no, "A or B"); None: a span of the evidence
    decided: OptionChoice | None  # the choice the evidence decides for, with the sentence that decided
    # What the answer may be, each with the sentence it cites, best first: the best-ranked spans of the evidence
    # for a free-form question, the decided option of an "A or B" one; none for yes/no (a bare "no" is not a
    # claim a quote supports) or when the evidence does not decide.
    candidates: list[Candidate]

    @property
    def offered(self) -> list[str]:
        """The answers offered: the candidates' for a free-form question; for a fixed form the decided choice,
        or every choice when the evidence does not decide."""
        if self.choices is None:
            return [c.text for c in self.candidates]
        return [self.decided.option] if self.decided is not None else self.choices


def answer_options(question: str, sentences: list[EvidenceSentence], *, pool: int,
                   bridges: Sequence[str] = ()) -> AnswerOptions:
    """The answer options for this question and this evidence: yes/no or "A or B" narrowed to the one the
    evidence decides for, when it decides; otherwise the `pool` best-ranked spans of the evidence (`bridges`:
    the entities its follow-up hops searched, poor answers themselves)."""
    question = cased_like(direct_question(question), (s.text for s in sentences))
    choices = answer_choices(question)
    if choices is None:
        return AnswerOptions(None, None, rank_candidates(question, sentences, k=pool, bridges=bridges))
    if choices == YES_NO:
        return AnswerOptions(choices, decide_shared(question, sentences) or decide_polarity(question, sentences), [])
    decided = choose_option(question, choices, sentences)
    cited = [Candidate(decided.option, 0.0, decided.quote, 0, decided.url)] if decided is not None else []
    return AnswerOptions(choices, decided, cited)


def bridge_options(question: str, sentences: list[EvidenceSentence], searched: Collection[str],
                   offered: int = BRIDGE_OPTIONS) -> list[Candidate]:
    """The `offered` names offered as a multi-hop question's bridge, best-ranked first: names of the sentences
    read that the run has not searched yet (`searched`, normalised). Training sets offer the same
    (train/bridge_examples.py)."""
    question = cased_like(direct_question(question), (s.text for s in sentences))
    ranked = rank_candidates(question, sentences, k=offered + len(searched), kind="name", weights=BRIDGE_W,
                             follow_links=False)
    if asks_person(question):  # "booked through the Deputy Site Warden": who holds the office is the next hop
        best = rank_candidates(question, sentences, k=1)
        if best and is_office(best[0].text):  # an office still a candidate: no holder was read (offices.py)
            ranked = [best[0], *(c for c in ranked if normalise(c.text) != normalise(best[0].text))]
    return [c for c in ranked if normalise(c.text) not in searched][:offered]
