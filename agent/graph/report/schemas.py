"""What the written report asks of the model, as pydantic models plus the JSON schema the decoder enforces.

The outline names sections and the findings each rests on, by number; a section's sentences each carry the
numbers of the findings they rest on, out of that section's only. The grammar keeps citations to findings
that exist and text free of brackets (no made-up "[7]") and of what would break the report's markdown.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

# xgrammar (and vLLM's check of it) drops min/maxLength beside a pattern and, with its compile cache on, fails on
# a repeat count above 128 (agent/graph/schemas.py): a longer text is two bounded runs one after the other.
_TEXT = r'[^<>"\\\[\]\x00-\x1f]'
_FIRST = r'[^ <>"\\\[\]\x00-\x1f#>*\-]'  # not a space, and nothing that makes a line a heading, quote or item
TITLE_MAX, SENTENCE_MAX = 64, 240


def _text(max_len: int) -> dict[str, Any]:
    first = min(max_len - 1, 127)
    rest = max_len - 1 - first
    tail = f"{_TEXT}{{0,{rest}}}" if rest else ""
    return {"type": "string", "pattern": f"^{_FIRST}{_TEXT}{{0,{first}}}{tail}$"}


class OutlineSection(BaseModel):
    title: str = Field(min_length=1)
    findings: list[int] = Field(min_length=1)


class OutlineOut(BaseModel):
    sections: list[OutlineSection] = Field(min_length=1)


class WrittenSentence(BaseModel):
    text: str = Field(min_length=1)
    cites: list[int] = Field(default_factory=list)


class SectionOut(BaseModel):
    sentences: list[WrittenSentence] = Field(min_length=1)


def _numbers(numbers: list[int], most: int) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "integer", "enum": numbers}, "minItems": 1,
            "maxItems": max(1, min(most, len(numbers)))}


def outline_schema(n_findings: int, max_sections: int) -> dict[str, Any]:
    section = {
        "type": "object",
        "properties": {"title": _text(TITLE_MAX), "findings": _numbers(list(range(1, n_findings + 1)), 8)},
        "required": ["title", "findings"],
        "additionalProperties": False,
    }
    return {"type": "object",
            "properties": {"sections": {"type": "array", "items": section, "minItems": 1, "maxItems": max_sections}},
            "required": ["sections"], "additionalProperties": False}


def section_schema(numbers: list[int], max_sentences: int) -> dict[str, Any]:
    """`numbers`: the findings this section may cite (its outline's)."""
    sentence = {
        "type": "object",
        "properties": {"text": _text(SENTENCE_MAX), "cites": _numbers(numbers, 3)},
        "required": ["text", "cites"],
        "additionalProperties": False,
    }
    return {"type": "object",
            "properties": {"sentences": {"type": "array", "items": sentence, "minItems": 1,
                                         "maxItems": max_sentences}},
            "required": ["sentences"], "additionalProperties": False}
