"""`deepresearch index PATH... [--name NAME] [--vectors]` and `deepresearch index --list`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..console import err, fail, out
from ..settings import get_settings

if TYPE_CHECKING:
    from deepresearch.tools.index.registry import IndexRegistry


def index_command(
    paths: list[Path] | None = typer.Argument(None, help="JSONL corpus (id,title,text), folder or file to index"),
    name: str | None = typer.Option(None, "--name", "-n", help="index name (default from settings: {settings.index})"),
    vectors: bool = typer.Option(False, "--vectors", help="also embed documents (MiniLM) for fused search"),
    list_: bool = typer.Option(False, "--list", help="list the indexes and exit"),
) -> None:
    """Build or refresh a local search index (incremental: only changed documents are re-indexed)."""
    from deepresearch.tools.index.build import index_paths
    from deepresearch.tools.index.ingest import IngestError
    from deepresearch.tools.index.registry import IndexRegistry, validate_index_name

    settings = get_settings()
    registry = IndexRegistry(settings.tools)
    try:
        if list_:
            if paths:
                raise fail("--list takes no paths")
            _print_list(registry)
            return
        if not paths:
            raise fail("give at least one PATH to index, or --list")
        index_name = name or settings.index
        try:
            validate_index_name(index_name)
            reports = index_paths(registry, index_name, list(paths), vectors=vectors)
        except (IngestError, ValueError) as exc:
            raise fail(str(exc)) from None
        for item in reports:
            r = item.report
            out.print(
                f"{item.path}: {r.added} added, {r.updated} updated, {r.unchanged} unchanged, {r.removed} removed"
                f" ({item.seconds:.1f}s)", highlight=False,
            )
            for reason in r.skipped[:20]:
                err.print(f"  skipped {reason}", highlight=False)
            if len(r.skipped) > 20:
                err.print(f"  … and {len(r.skipped) - 20} more skipped", highlight=False)
        info = registry.open(index_name).info()
        out.print(f"index {info.name!r}: {info.documents} documents{' + vectors' if info.vectors else ''}"
                  f" in {info.path}", highlight=False)
    finally:
        registry.close()


def _print_list(registry: IndexRegistry) -> None:
    from rich.table import Table

    infos = registry.list()
    if not infos:
        out.print("no indexes yet — build one with: deepresearch index PATH --name NAME")
        return
    table = Table("name", "documents", "vectors", "sources", "updated")
    for info in infos:
        updated = datetime.fromtimestamp(info.updated_at).strftime("%Y-%m-%d %H:%M") if info.updated_at else "-"
        table.add_row(info.name, str(info.documents), "yes" if info.vectors else "no",
                      "\n".join(info.sources) or "-", updated)
    out.print(table)


INDEX_EXAMPLES = """Examples:
  deepresearch index ~/papers ~/notes.md --name mine     (md, txt, html, pdf files or folders)
  deepresearch index corpus.jsonl --name wiki --vectors  (JSONL lines: {"id", "title", "text"})
  deepresearch index --list
  deepresearch ask --index mine --offline "…"
A changed file is re-indexed, a removed one dropped; `deepresearch web serve --index mine` serves it as a website."""


def register(app: typer.Typer) -> None:
    app.command("index", epilog=INDEX_EXAMPLES)(index_command)
