"""`--help` that says what things are: flags without a `<bool>` type, the default of an on/off flag
pair named as the flag, defaults that come from settings shown as the value in effect, and examples for
every command (a subcommand shows the lines of its group's examples that run it).

A help string names a setting as `{settings.index}` (any dotted path); once settings are loaded,
`fill_settings` replaces it with the value (`demo`), so `--config`, the environment and the config
file all show through.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from pydantic import SecretStr
from typer.core import TyperGroup, TyperOption

SETTING = re.compile(r"\{settings\.([A-Za-z_][\w.]*)\}")


def _commands(command: Any) -> Iterator[Any]:
    yield command
    if isinstance(command, TyperGroup):
        for sub in command.commands.values():
            yield from _commands(sub)


def _options(command: Any) -> Iterator[TyperOption]:
    help_option = command.get_help_option(typer.Context(command))  # created lazily; made here to be polished
    for param in [*command.params, *([help_option] if help_option else [])]:
        if isinstance(param, TyperOption):
            yield param


EXAMPLES = "Examples:"


def share_examples(group: Any, path: str = "deepresearch") -> None:
    """A subcommand without examples of its own gets its group's example lines that run it (`deepresearch runs
    show …` for `runs show --help`), so each example is written once, where the group lists them all."""
    if not isinstance(group, TyperGroup):
        return
    lines = (group.epilog or "").split(EXAMPLES, 1)[-1].splitlines() if EXAMPLES in (group.epilog or "") else []
    for name, sub in group.commands.items():
        here = f"{path} {name}"
        if not sub.epilog:
            own = [line for line in lines if line.strip() == here or line.strip().startswith(here + " ")]
            if own:
                sub.epilog = "\n".join([EXAMPLES, *own, f"More in: {path} --help"])
        share_examples(sub, here)


def polish(root: Any) -> None:
    """Flags show no type; a `--x/--no-x` pair says which one is the default; subcommands share their group's
    examples."""
    share_examples(root)
    for command in _commands(root):
        for option in _options(command):
            if not option.is_flag:
                continue
            option.metavar = ""
            if option.secondary_opts and isinstance(option.default, bool):
                on = option.opts[0] if option.default else option.secondary_opts[0]
                option.show_default = False
                option.help = f"{option.help or ''} (default: {on})".strip()


def setting_value(settings: Any, dotted: str) -> str:
    value = settings
    for part in dotted.split("."):
        value = getattr(value, part)
    if isinstance(value, SecretStr):
        return "set" if value.get_secret_value() else "not set"
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) or "none"
    return str(value)


def fill_settings(root: Any, settings: Any) -> None:
    """Replace every `{settings.x.y}` in commands' and options' help with the value in effect."""

    def fill(text: str | None) -> str | None:
        if not text or "{settings." not in text:
            return text
        return SETTING.sub(lambda m: setting_value(settings, m[1]), text)

    for command in _commands(root):
        command.help = fill(command.help)
        command.epilog = fill(command.epilog)
        for param in command.params:
            if isinstance(param, TyperOption):
                param.help = fill(param.help)
