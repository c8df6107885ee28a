"""`deepresearch` console script: global options, then one module per command group."""

from __future__ import annotations

import gc
import importlib
import sys
from pathlib import Path
from typing import Any

import typer

from deepresearch import __version__

from .console import fail, out
from .errors import ErrorBoundary, preflight
from .help import fill_settings, polish
from .settings import SettingsError, load_settings, set_settings

EXAMPLES = """Examples:
  deepresearch ask "Who designed the Analytical Engine?"
  deepresearch ask --offline --out report.pdf "…"
  deepresearch index ~/notes --name mine
  deepresearch runs list
  deepresearch memory list
  deepresearch doctor
  deepresearch serve                     (HTTP API; docs at http://127.0.0.1:8080/docs)
  deepresearch mcp                       (MCP server for Claude Desktop, Cursor, agents)
Every command has its own --help with examples."""


class Root(ErrorBoundary):
    """The root group: every command's errors pass through one boundary, and its help is polished."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        polish(self)


app = typer.Typer(
    name="deepresearch",
    cls=Root,
    help="A deep-research agent that runs on your own model and improves itself from its own use.",
    epilog=EXAMPLES,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module exposes register(app). Heavy imports stay inside command bodies.
COMMAND_MODULES = ["ask", "tui", "doctor", "runs", "index", "web", "model", "eval", "train", "adapters",
                   "memory", "serve", "mcp", "build"]


def _version(value: bool) -> None:
    if value:
        out.print(f"deepresearch {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None, "--config", help="TOML settings file (default ~/.config/deepresearch/config.toml)"
    ),
    data_dir: Path | None = typer.Option(
        None, "--data-dir", help="where traces, indexes, adapters live (env DEEPRESEARCH_DATA_DIR)"
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="print version"),
) -> None:
    overrides = {"data_dir": data_dir} if data_dir else {}
    try:
        settings = load_settings(config, **overrides)
        preflight(settings, ctx.invoked_subcommand)
    except SettingsError as exc:
        raise fail(str(exc)) from None
    set_settings(settings)
    fill_settings(ctx.find_root().command, settings)  # help shows the defaults in effect


for _name in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.commands.{_name}").register(app)


def main() -> None:
    try:
        app()
    finally:
        # At exit the interpreter garbage-collects every object a command created (the model, torch's
        # registries: ~1 s after `ask`) only to free memory the process is about to give back. Frozen
        # objects are skipped; atexit handlers and stream flushes still run.
        # Not once triton is loaded (transformers' model classes import it: the first run's GGUF conversion, an
        # adapter): its nanobind bindings print a screen of "leaked instance" warnings for every object left
        # uncollected at exit.
        if "triton" not in sys.modules:
            gc.freeze()
