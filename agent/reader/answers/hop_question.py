"""The rest of a multi-hop question once its bridge is known: the question's words that the sentence naming the
bridge does not already answer ("the place of birth of the director of film Boden's Boy", bridge Henry Edwards from
"Boden's Boy ... directed by Henry Edwards": "place birth"). The graph asks the bridge's evidence about it
(agent/graph/last_hop.py); the words are the question's own, so no dataset's phrasing is named here.
"""

from __future__ import annotations

from ..language.phrasing import direct_question
from ..language.words import content_words, stem


def rest_of_question(question: str, quote: str, title: str, bridge: str) -> str:
    """The question's content words, in order, that neither the bridge's sentence (or its source's title) nor the
    bridge's own name holds; "" when the sentence covers them all."""
    question = direct_question(question)
    covered = {stem(w) for w in content_words(f"{quote} {title} {bridge}")}
    return " ".join(w for w in content_words(question) if stem(w) not in covered)
