"""The prose fields the model writes (queries, claims, points) cannot hold a few-shot placeholder.

Seen in the 100-question eval: a re-plan query "… the FFBAFAC<book> the FFBAFAC<book> …" copied the
planner example's "<book>". The grammar now leaves "<" out of those fields; the length limit, which
xgrammar drops beside a pattern, lives in the pattern.
"""

from __future__ import annotations

import json

import pytest
from deepresearch.agent.graph.schemas import PLAN_QUERY_MAX, finding_schema, plan_schema, writer_schema
from deepresearch.agent.model.embedded.decoding.grammar import GrammarCache
from deepresearch.agent.prompts import leaks_example


@pytest.fixture(scope="module")
def grammar(model_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return tokenizer, GrammarCache(tokenizer, len(tokenizer))


def accepts(grammar, schema: dict, text: str) -> bool:
    tokenizer, cache = grammar
    row = cache.matcher(cache.compile(schema))
    return all(row.accept(t) for t in tokenizer.encode(text, add_special_tokens=False)) and row.accept(
        tokenizer.eos_token_id)


def plan(query: str) -> str:
    return json.dumps({"steps": [{"tool": "search", "query": query}]}, separators=(",", ":"))


def test_a_plan_query_cannot_copy_a_placeholder(grammar):
    schema = plan_schema(["search"], 2)
    assert accepts(grammar, schema, plan("Aphra Behn death year"))
    leaked = plan("The Sports Team that Craig Westcarr played for the FFBAFAC<book>")
    assert leaks_example(leaked)
    assert not accepts(grammar, schema, leaked)


def test_prose_keeps_its_length_limits(grammar):
    schema = plan_schema(["search"], 2)
    assert accepts(grammar, schema, plan("x" * PLAN_QUERY_MAX))
    assert not accepts(grammar, schema, plan("x" * (PLAN_QUERY_MAX + 1)))
    assert not accepts(grammar, schema, plan(""))


def test_findings_and_points_are_chosen_not_written(grammar):
    finding = finding_schema(["Aphra Behn died in 1689."])

    def found(**fields) -> str:
        return json.dumps({"relevant": True, "quote": "Aphra Behn died in 1689.", **fields}, separators=(",", ":"))

    # The extractor picks a sentence and writes nothing of its own: no claim field to decode.
    assert accepts(grammar, finding, found())
    assert not accepts(grammar, finding, found(claim="Aphra Behn died in 1689"))
    writer = writer_schema(1, choices=["1689"])
    # The key points are findings by number: none written, none citing a finding that does not exist.
    assert accepts(grammar, writer, json.dumps({"answer": "1689", "points": [1]}, separators=(",", ":")))
    assert not accepts(grammar, writer, json.dumps({"answer": "1689", "points": [2]}, separators=(",", ":")))
    written = {"answer": "1689", "points": [{"text": "Aphra Behn died in 1689", "cite": 1}]}
    assert not accepts(grammar, writer, json.dumps(written, separators=(",", ":")))
