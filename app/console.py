"""The rich consoles the CLI prints to: results to stdout, progress and errors to stderr."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def one_line(message: str) -> str:
    """`message` as one printable line: whitespace runs (newlines too) become one space, and characters
    that cannot be encoded (undecodable bytes from the environment or a file name) become escapes."""
    return " ".join(message.split()).encode("utf-8", "backslashreplace").decode("utf-8")


def say(line: str) -> None:
    """A plain result line on stdout: no markup, highlighting or emoji codes (it quotes paths, numbers, dicts)."""
    out.print(line, markup=False, highlight=False, emoji=False)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one clear error line and return the Exit to raise (`raise fail(...)`)."""
    # escape(): the message quotes user input (paths, values), which must not be read as rich markup.
    err.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False)
    return typer.Exit(code)


def dataset_paths(name: str, questions: Path | None, corpus: Path | None) -> tuple[Path, Path]:
    from deepresearch.evals.data.dataset import DatasetError, bundled_dataset

    if questions is not None or corpus is not None:
        raise fail("--dataset names both the questions and their corpus: drop --questions/--corpus")
    try:
        return bundled_dataset(name)
    except DatasetError as exc:
        raise fail(str(exc)) from None
