"""The reader: the rules that find a question's answer in what a run read, and say whether it can be given. Pure and
standard library only (no model, no tools, no graph: tests/agent/test_architecture.py holds it to that); the graph,
the trainer and the evals import it from here, this face.

- document/: how a document is read — read_units (its structure: sentences, table rows with their header, items,
  fields, headings), is_masthead (a document's title line), split_sentences / normalise / locate / quote_supported /
  best_sentences (units as text, and quotes), EvidenceSentence (a unit with where it stands), when a unit was
  written (recency)
- language/: the words — spans of each kind (Span), what a question asks for (answer_kind), answer_choices (its
  form: yes/no, "A or B"), stems; every function here that takes a question reads the one a request wraps ("Do you
  know what the fax number is?" asks "What is the fax number?", not yes or no: language/phrasing.py), and those that
  take evidence too write a lower-case question's names as the evidence writes them
- answers/: answer_options(question, sentences, pool=, bridges=) — the writer's choices, the one the evidence
  decides for, the ranked spans; bridge_options (a multi-hop question's follow-up names); labelled_spans (a
  unit's answer spans, each with its column or key; the trainer's question synthesis builds on it); the likelihood
  template, weight and roles (the graph's scoring.py makes the calls); rest_of_question (what a multi-hop question
  still asks once its bridge is known); best_first (the candidates' order: a range or size before the number it starts
  with)
- language/ also: question_kind (a factoid question, one answer span, or an open one: explain, compare, summarise,
  list: a report), question_parts (the things an open question covers one by one), asks_beyond_names (a search asks
  more than the question's names), speaks_of (a quote names what a question is about itself)
- trust/: RelevanceReader (is a unit about the question, on its own or through a chain), by_relevance (the
  candidates re-sorted with it), answer_confidence (how likely the best candidate is right; none for a value
  labelled as another thing or called replaced), ABOUT

The packages import downwards in that order, and document/ and language/ import nothing of the reader's.
"""

from .answers.candidates import Candidate, best_first
from .answers.candidates import W as FEATURE_WEIGHTS
from .answers.hop_question import rest_of_question
from .answers.likelihood import (
    ANSWER_ROLE,
    BRIDGE_ROLE,
    BRIDGE_TEMPLATE,
    EMPTY_LIKELIHOOD,
    LIKELIHOOD_WEIGHT,
    TEMPLATE,
    TEMPLATE_VERSION,
)
from .answers.options import BRIDGE_OPTIONS, AnswerOptions, answer_options, bridge_options
from .answers.structure import labelled_spans
from .document.evidence import EvidenceSentence, evidence_units
from .document.text import best_sentences, locate, normalise, quote_supported, split_sentences, without_disambiguation
from .document.units import Unit, is_masthead, read_units
from .language.answer_form import NOT_FOUND, YES_NO, answer_choices
from .language.kinds import answer_kind
from .language.open_questions import QuestionKind, asks_beyond_names, question_kind, question_parts, speaks_of
from .language.spans import Span
from .trust.confidence import ABOUT, answer_confidence
from .trust.ranking import ABOUT_WEIGHT, by_relevance
from .trust.relevance import Relevance, RelevanceReader, texts_about

__all__ = [
    "ANSWER_ROLE", "BRIDGE_OPTIONS", "BRIDGE_ROLE", "BRIDGE_TEMPLATE", "EMPTY_LIKELIHOOD", "LIKELIHOOD_WEIGHT",
    "NOT_FOUND", "TEMPLATE", "TEMPLATE_VERSION", "YES_NO", "AnswerOptions", "Candidate", "EvidenceSentence",
    "answer_choices", "answer_options", "best_sentences", "bridge_options", "locate", "normalise", "quote_supported",
    "split_sentences", "read_units", "evidence_units", "Unit", "is_masthead", "ABOUT", "answer_confidence", "Relevance",
    "RelevanceReader", "texts_about", "ABOUT_WEIGHT", "by_relevance", "FEATURE_WEIGHTS",
    "QuestionKind", "question_kind", "question_parts",
    "asks_beyond_names", "speaks_of", "Span", "labelled_spans", "answer_kind", "rest_of_question",
    "without_disambiguation", "best_first",
]
