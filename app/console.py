"""The rich consoles the CLI prints to: results to stdout, progress and errors to stderr."""

from __future__ import annotations

import typer
from rich.console import Console

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one clear error line and return the Exit to raise (`raise fail(...)`)."""
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)
