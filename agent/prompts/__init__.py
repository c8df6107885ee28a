"""One prompt file per role. Each prompt's version (a hash of its text) is recorded in the trace."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

ROLES = ("planner", "coordinator", "executor", "extractor", "writer", "outliner", "reporter")  # one <role>.md each


@dataclass(frozen=True)
class Prompt:
    role: str
    system: Template
    user: Template
    version: str

    def messages(self, **values: object) -> list[dict[str, str]]:
        text = {k: str(v) for k, v in values.items()}
        return [
            {"role": "system", "content": self.system.safe_substitute(text)},
            {"role": "user", "content": self.user.substitute(text)},
        ]


@cache
def load_prompt(role: str) -> Prompt:
    """Prompt files hold a system part and a user template, split by a line '---'."""
    text = resources.files(__package__).joinpath(f"{role}.md").read_text(encoding="utf-8")
    system, _, user = text.partition("\n---\n")
    version = f"{role}@{hashlib.sha1(text.encode()).hexdigest()[:8]}"
    return Prompt(role=role, system=Template(system.strip()), user=Template(user.strip()), version=version)


_PLACEHOLDER = re.compile(r"<[a-z][a-z ]{1,30}>")


@cache
def example_markers() -> frozenset[str]:
    """The placeholders ("<person>", "<film>") of every role's few-shot example.

    Examples are written with placeholders, never real names, so they cannot be copied into a plan,
    a query or an answer unnoticed: an output holding one of these has copied an example.
    """
    found: set[str] = set()
    for role in ROLES:
        prompt = load_prompt(role)
        found |= set(_PLACEHOLDER.findall(prompt.system.template + prompt.user.template))
    return frozenset(found)


def leaks_example(text: str) -> bool:
    """True when a model output contains one of the few-shot examples' placeholders."""
    return any(marker in text for marker in example_markers())
