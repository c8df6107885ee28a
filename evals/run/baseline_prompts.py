"""Prompts and JSON schemas of the three baseline systems (the graph has its own in agent/prompts).

Schemas are small and flat so that the 135M model fills them under the grammar; a bigger
model reads the same prompts. Bump PROMPT_VERSION when a prompt changes: traces record it.
"""

from __future__ import annotations

from typing import Any

PROMPT_VERSION = "evals-baselines-2"

CLOSED_BOOK_SYSTEM = (
    "You answer questions from your own knowledge. Reply with the shortest possible answer: "
    "a name, a date, a number, or yes/no. No sentence, no explanation."
)

RETRIEVE_SYSTEM = (
    "You answer questions using only the numbered sources you are given. Reply with the "
    "shortest possible answer (a name, a date, a number, or yes/no) and the number of the "
    "source that supports it."
)

LOOP_SYSTEM = (
    "You research a question with a search engine over an encyclopedia. Choose one action:\n"
    "- search: query = a few key words from the question (names, titles, places); new words each time.\n"
    "- open: query = the number of a source to read in full.\n"
    "- answer: when the evidence shown is enough to answer the question.\n"
    "Reply with one JSON action."
)

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool": {"type": "string", "enum": ["search", "open", "answer"]},
        "query": {"type": "string"},
    },
    "required": ["tool", "query"],
    "additionalProperties": False,
}


def cited_answer_schema(source_numbers: list[int]) -> dict[str, Any]:
    """Answer plus the number of one shown source; the enum keeps the model to real numbers."""
    return {
        "type": "object",
        "properties": {
            "answer": {"type": "string"},
            "source": {"type": "integer", "enum": source_numbers},
        },
        "required": ["answer", "source"],
        "additionalProperties": False,
    }


def closed_book_user(question: str) -> str:
    return f"Question: {question}\nAnswer:"


def sources_block(sources: list[tuple[int, str, str]]) -> str:
    """`[n] title` then the (already clipped) text, one source after another."""
    return "\n\n".join(f"[{n}] {title}\n{text}" for n, title, text in sources) or "(none yet)"


def retrieve_user(question: str, sources: list[tuple[int, str, str]]) -> str:
    return f"Sources:\n{sources_block(sources)}\n\nQuestion: {question}\nAnswer:"


def loop_user(question: str, sources: list[tuple[int, str, str]], last_observation: str, turn: int,
              max_turns: int, searched: list[str]) -> str:
    done = "; ".join(searched) or "none"
    return (
        f"Question: {question}\n\nEvidence so far:\n{sources_block(sources)}\n\n"
        f"Searches done: {done}\nLast result: {last_observation}\n\n"
        f"Action {turn} of {max_turns}. Choose the next action."
    )
