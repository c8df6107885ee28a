"""The reader: the rules that find a question's answer options in the sentences a run read. Pure and standard
library only (no model, no tools, no graph: tests/agent/test_architecture.py holds it to that); the graph, the
trainer and the scripts import it from here.

- answer_options(question, sentences, pool=, bridges=): the writer's choices, the one the evidence decides for,
  and the ranked spans (options.py); bridge_options: the names a multi-hop question's follow-up hop may search
- answer_choices: the answer's form (yes/no, "A or B") as the question gives it (answer_form.py)
- read_units: a document's reading units, following its structure (units.py); split_sentences, normalise, locate,
  quote_supported, best_sentences: units as strings, and quotes (text.py); labelled_spans: a unit's answer spans,
  each with its column or key (structure.py), and answer_kind: what a question asks for (kinds.py), which the
  trainer's question synthesis (train/synth/) builds on
- RelevanceReader: is a unit about the question, on its own or through a chain (relevance.py); answer_confidence:
  how likely the best candidate is right, which decides between answering and "not found" (confidence.py)
- TEMPLATE, BRIDGE_TEMPLATE, LIKELIHOOD_WEIGHT, the roles: how the policy's likelihood is asked and weighed
  beside the rules' features (likelihood.py; the graph's scoring.py makes the calls)

Inside, a module uses only those listed before it: units, text, spans, countries, evidence, likelihood; words,
answer_form; candidates, comparison; shared_property; options; relevance, confidence.
"""

from .answer_form import NOT_FOUND, YES_NO, answer_choices
from .candidates import Candidate
from .candidates import W as FEATURE_WEIGHTS
from .confidence import ABOUT, answer_confidence
from .evidence import EvidenceSentence
from .likelihood import (
    ANSWER_ROLE,
    BRIDGE_ROLE,
    BRIDGE_TEMPLATE,
    EMPTY_LIKELIHOOD,
    LIKELIHOOD_WEIGHT,
    TEMPLATE,
    TEMPLATE_VERSION,
)
from .kinds import answer_kind
from .options import BRIDGE_OPTIONS, AnswerOptions, answer_options, bridge_options
from .relevance import Relevance, RelevanceReader, texts_about
from .spans import Span
from .structure import labelled_spans
from .text import best_sentences, locate, normalise, quote_supported, split_sentences
from .units import Unit, read_units

__all__ = [
    "ANSWER_ROLE", "BRIDGE_OPTIONS", "BRIDGE_ROLE", "BRIDGE_TEMPLATE", "EMPTY_LIKELIHOOD", "LIKELIHOOD_WEIGHT",
    "NOT_FOUND", "TEMPLATE", "TEMPLATE_VERSION", "YES_NO", "AnswerOptions", "Candidate", "EvidenceSentence",
    "answer_choices", "answer_options", "best_sentences", "bridge_options", "locate", "normalise", "quote_supported",
    "split_sentences", "read_units", "Unit", "ABOUT", "answer_confidence", "Relevance", "RelevanceReader",
    "texts_about", "FEATURE_WEIGHTS", "Span", "labelled_spans", "answer_kind",
]
