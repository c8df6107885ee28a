"""`deepresearch memory list|show|forget|clear`: inspect and prune the findings kept across runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.prompt import Confirm
from rich.table import Table

from ..console import err, fail, out
from ..settings import get_settings

if TYPE_CHECKING:
    from deepresearch.tools.memory.store import Memory, MemoryStore

memory_app = typer.Typer(
    help="Long-term memory: findings that later runs recall. List, show, forget one, or clear them all.",
    no_args_is_help=True,
    epilog="""Examples:
  deepresearch memory list
  deepresearch memory show 3f2a9c           (a unique prefix of the id is enough)
  deepresearch memory forget 3f2a9c 81d0e4
  deepresearch memory clear --yes
Only finished runs whose answer has a verified citation add to memory.""",
)


@contextmanager
def _store() -> Iterator[MemoryStore | None]:
    """The memory store, opened without the embedding model (nothing here embeds); None if none exists
    yet (a command that only reads must not create folders)."""
    from deepresearch.tools.memory.store import MemoryStore

    settings = get_settings().tools
    if not settings.memory_dir.is_dir():
        yield None
        return
    yield MemoryStore(settings.memory_dir, None, settings.memory.collection)


def _when(memory: Memory) -> str:
    return datetime.fromtimestamp(memory.created_at, tz=UTC).astimezone().strftime("%Y-%m-%d %H:%M")


def _as_json(memory: Memory) -> dict[str, object]:
    return {"id": memory.id, "text": memory.text, "source": memory.source,
            "created_at": datetime.fromtimestamp(memory.created_at, tz=UTC).isoformat()}


@memory_app.command("list")
def list_memories(
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="newest N memories"),
    as_json: bool = typer.Option(False, "--json", help="print them as a JSON list"),
) -> None:
    """List remembered findings, newest first (id, when, source, text)."""
    with _store() as store:
        memories = store.entries() if store else []
    shown = memories[:limit]
    if as_json:
        print(json.dumps([_as_json(m) for m in shown], ensure_ascii=False, indent=2))
        return
    if not memories:
        out.print("no memories yet: finished runs with a verified answer add their verified findings")
        return
    table = Table("id", "saved", "source", "text")
    for m in shown:
        table.add_row(m.id[:12], _when(m), escape(m.source[:50]), escape(" ".join(m.text.split())[:90]))
    out.print(table)
    if len(memories) > len(shown):
        out.print(f"{len(shown)} of {len(memories)} memories; more with --limit")


@memory_app.command("show")
def show(
    memory_id: str | None = typer.Argument(None, help="memory id (a unique prefix is enough)"),
    as_json: bool = typer.Option(False, "--json", help="print it as JSON"),
) -> None:
    """Print one memory in full: its text, source and when it was saved."""
    from deepresearch.tools.memory.store import MemoryNotFound

    if memory_id is None:
        raise fail("give a memory id, e.g. deepresearch memory show 3f2a9c (ids: deepresearch memory list)")
    with _store() as store:
        try:
            if store is None:
                raise MemoryNotFound(f"no memory with id '{memory_id}' (memory is empty)")
            memory = store.get(memory_id)
        except MemoryNotFound as exc:
            raise fail(str(exc)) from None
    if as_json:
        print(json.dumps(_as_json(memory), ensure_ascii=False, indent=2))
        return
    out.print(f"id:     {memory.id}\nsaved:  {_when(memory)}\nsource: {memory.source or '-'}\n\n{memory.text}",
              markup=False, highlight=False)


@memory_app.command("forget")
def forget(
    memory_ids: list[str] | None = typer.Argument(None, help="memory ids (unique prefixes are enough)"),
) -> None:
    """Delete memories by id. If any id is unknown, nothing is deleted."""
    from deepresearch.tools.memory.store import MemoryNotFound

    if not memory_ids:
        raise fail("give the ids to forget, e.g. deepresearch memory forget 3f2a9c (ids: deepresearch memory list)")
    with _store() as store:
        try:
            if store is None:
                raise MemoryNotFound(f"no memory with id '{memory_ids[0]}' (memory is empty)")
            forgotten = store.forget(memory_ids)
        except MemoryNotFound as exc:
            raise fail(f"{exc}; nothing was deleted") from None
    out.print(f"forgot {len(forgotten)} memor{'y' if len(forgotten) == 1 else 'ies'}: {', '.join(forgotten)}",
              highlight=False)


@memory_app.command("clear")
def clear(
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
) -> None:
    """Delete every memory (asks first unless --yes)."""
    with _store() as store:
        count = store.count() if store else 0
        if store is None or count == 0:
            out.print("memory is already empty")
            return
        if not yes:
            if not sys.stdin.isatty():
                raise fail(f"memory clear deletes all {count} memories; confirm with --yes")
            if not Confirm.ask(f"delete all {count} memories?", default=False, console=err):
                err.print("nothing deleted")
                raise typer.Exit(1)
        deleted = store.clear()
    out.print(f"deleted {deleted} memories")


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")
