"""The trainer's simulated search reads a document as the graph does: a table row is one unit with its columns'
names, so the answer choice trained on a person's notes sees the rows it will answer from."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.agent.reader import answer_options
from deepresearch.train.choice.simulated_evidence import SimulatedSearch

PARTS = ("Chains\n| Part | Type | Member price | Shelf |\n|---|---|---|---|\n"
         "| KMC X11-93 | chain | €24.50 | C2 |\n| KMC CL555R | quick link, pair | €4.00 | C2 drawer |\n"
         "Always fit a new CL555R quick link when re-joining a chain.")


def test_a_table_row_is_read_with_its_header_and_its_cell_is_the_answer(tmp_path: Path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "parts.html", "title": "Parts we stock", "text": PARTS}) + "\n")
    question = "How much is the member price of KMC CL555R in Chains?"
    units, _ = SimulatedSearch(corpus).evidence(question)
    row = next(u for u in units if "KMC CL555R" in u.text)
    assert row.kind == "row" and row.header == ("Part", "Type", "Member price", "Shelf") and row.heading == "Chains"
    assert answer_options(question, units, pool=5).candidates[0].text == "€4.00"
