"""`deepresearch` console script: global options, then one module per command group."""

from __future__ import annotations

import importlib
from pathlib import Path

import typer

from deepresearch import __version__

from .console import fail, out
from .errors import ErrorBoundary, preflight
from .settings import SettingsError, load_settings, set_settings

app = typer.Typer(
    name="deepresearch",
    cls=ErrorBoundary,
    help="A deep-research agent that runs on your own model and improves itself from its own use.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each module exposes register(app). Heavy imports stay inside command bodies.
COMMAND_MODULES = ["ask", "tui", "doctor", "runs", "index", "web", "model", "eval", "train", "adapters",
                   "memory"]


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


for _name in COMMAND_MODULES:
    importlib.import_module(f"{__package__}.commands.{_name}").register(app)


def main() -> None:
    app()
