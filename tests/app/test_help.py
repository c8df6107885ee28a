"""`--help` for every command: no `<bool>` on flags, defaults that come from settings shown as their value,
descriptions for every subcommand, and examples on every command's help (the README promises them)."""

from __future__ import annotations

import os
from pathlib import Path
from unittest import mock

import pytest
import typer
from deepresearch.app.cli import app
from typer.core import TyperGroup
from typer.testing import CliRunner

from .helpers import clean_env


def _paths(command: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [prefix]
    if isinstance(command, TyperGroup):
        for name, sub in command.commands.items():
            found += _paths(sub, (*prefix, name))
    return found


COMMANDS = _paths(typer.main.get_command(app))


def help_of(tmp_path: Path, path: tuple[str, ...], **env: str) -> str:
    environment = {**clean_env(tmp_path), "COLUMNS": "300", **env}
    with mock.patch.dict(os.environ, environment, clear=True):
        result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_command_is_covered():
    assert len(COMMANDS) > 20 and ("memory", "forget") in COMMANDS and ("runs", "show") in COMMANDS


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "root")
def test_help_shows_no_bool_type_and_no_unfilled_setting(tmp_path: Path, path: tuple[str, ...]):
    text = help_of(tmp_path, path)
    assert "<bool>" not in text
    assert "{settings." not in text and "default: settings." not in text


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "root")
def test_every_command_has_examples_that_run_it(tmp_path: Path, path: tuple[str, ...]):
    text = help_of(tmp_path, path)
    assert "Examples:" in text, text
    examples = text.split("Examples:")[1]
    assert f"deepresearch {' '.join(path)}".strip() in examples, examples


def test_defaults_from_settings_show_the_value_in_effect(tmp_path: Path):
    assert "(default from settings: demo)" in help_of(tmp_path, ("ask",))
    assert "(default from settings: mine)" in help_of(tmp_path, ("ask",), DEEPRESEARCH_INDEX="mine")
    assert "(default from settings: 3)" in help_of(tmp_path, ("train",), DEEPRESEARCH_TRAIN__GRPO__NUM_GENERATIONS="3")
    text = help_of(tmp_path, ("ask",))
    assert "(default: --checkpoint)" in text  # an on/off pair names the default flag


def test_every_subcommand_has_a_description(tmp_path: Path):
    for group in [p for p in COMMANDS if p and any(len(q) > len(p) and q[:len(p)] == p for q in COMMANDS)]:
        table = help_of(tmp_path, group).split("Commands")[1]
        for name in (q[-1] for q in COMMANDS if len(q) == len(group) + 1 and q[:len(group)] == group):
            [row] = [line for line in table.splitlines() if line.strip("│ ").startswith(name + " ")]
            assert len(row.strip("│ ").split()) > 1, f"{' '.join(group)} {name} has no description"
