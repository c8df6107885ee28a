"""What a user reads has no internal jargon: no session or issue numbers, no scratch paths, in any command's
help, in the strings the CLI prints, or in what `adapters list` shows of the shipped starter adapter."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from deepresearch.train.adapters.starter import packaged_starter

from .helpers import clean_env, cli
from .test_help import COMMANDS, help_of

JARGON = re.compile(r"\b(session|issue)s? \d+|\bitem \d+ of\b|\bs\d{2}\b|/tmp/s\d+", re.IGNORECASE)
APP = Path(__file__).resolve().parents[2] / "app"


def _printed_strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings (a command's docstring is its help, read there)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "root")
def test_help_has_no_jargon(tmp_path: Path, path: tuple[str, ...]):
    assert not JARGON.search(help_of(tmp_path, path))


def test_the_clis_strings_have_no_jargon():
    found = [f"{file.relative_to(APP.parent)}:{line}: {text[:80]!r}" for file in sorted(APP.rglob("*.py"))
             for line, text in _printed_strings(file) if JARGON.search(text)]
    assert found == []


def test_adapters_list_shows_the_starter_without_jargon(tmp_path: Path):
    starter = packaged_starter()
    if starter is None:
        pytest.skip("this install ships no starter adapter")
    meta = json.loads((starter / "metadata.json").read_text(encoding="utf-8"))
    assert not JARGON.search(meta["origin"]) and not JARGON.search(meta["eval"]["metric"])
    listed = cli("adapters", "list", env=clean_env(tmp_path, DEEPRESEARCH_MODEL__STARTER_ADAPTER="true"))
    assert listed.returncode == 0 and "starter" in listed.stdout, listed.stderr
    assert not JARGON.search(listed.stdout), listed.stdout
