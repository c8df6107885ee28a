"""Few-shot examples must not be copyable into outputs: they use placeholders, never real names."""

from __future__ import annotations

import re

from deepresearch.agent.prompts import ROLES, example_markers, leaks_example, load_prompt

# The entities earlier examples used; each surfaced in real outputs (plans, queries, answers).
OLD_EXAMPLE_ENTITIES = ("Jane Austen", "Pride and Prejudice", "Titanic", "James Cameron", "Steventon",
                        "Academy Award")


def example_part(role: str) -> str:
    system = load_prompt(role).system.template
    return system[system.index("Example"):] if "Example" in system else ""


def test_examples_name_no_real_entity():
    for role in ROLES:
        example = example_part(role)
        assert example, f"{role}: no example"
        assert not any(e in example for e in OLD_EXAMPLE_ENTITIES), role
        # Every capitalised word of an example is a prompt word (Question, Findings, ...), not a name.
        words = set(re.findall(r"\b[A-Z][a-z]+\b", re.sub(r"<[^>]*>", "", example)))
        assert words <= {"Example", "Question", "Findings", "Candidates", "Names", "Source", "Step",
                         "Observations", "Choose", "Where", "Who", "In", "Section"}, (role, words)


def test_placeholders_are_recognised_as_leaks():
    assert "<person>" in example_markers()
    assert leaks_example('{"query": "<person> born"}')
    assert not leaks_example('{"query": "Aphra Behn born"}')


def test_the_planner_writes_only_what_it_decides():
    # Its free-text goal field copied the example's goal into 11 of 100 eval runs; goals now come from the query.
    from deepresearch.agent.graph.schemas import plan_schema

    step = plan_schema(["search"], 2)["properties"]["steps"]["items"]
    assert set(step["properties"]) == {"tool", "query"}
