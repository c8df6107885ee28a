"""`deepresearch memory list|show|forget|clear` through the real CLI over a real Chroma memory store."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from deepresearch.tools.memory.store import MemoryStore

from .helpers import clean_env, cli, one_error_line


class TinyEmbedder:
    """Seeding only: the memory commands never embed (they open the store without an embedder)."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [[float(len(t) % 7 + 1), 1.0, float(sum(map(ord, t)) % 11 + 1)] for t in texts]


NOTES = [
    ("Charles Babbage designed the Analytical Engine.", "local://demo/ae"),
    ("Aphra Behn wrote The City Heiress.", "https://example.org/behn"),
    ("The wrong answer [bold]1999[/bold] <script>alert(1)</script>", "https://example.org/bad"),
]


def seed(data: Path, notes: list[tuple[str, str]]) -> list[str]:
    store = MemoryStore(data / "memory", TinyEmbedder())  # type: ignore[arg-type]
    ids = []
    for text, source in notes:
        ids.append(store.remember(text, source)[0])
        time.sleep(0.01)  # distinct created_at: list order is newest first
    return ids


def memories(data: Path) -> list[str]:
    return [m.id for m in MemoryStore(data / "memory", None).entries()]


def test_list_show_forget_clear(tmp_path: Path):
    env = clean_env(tmp_path)
    data = tmp_path / "data"
    ids = seed(data, NOTES)

    listed = cli("memory", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [r["id"] for r in rows] == ids[::-1]  # newest first
    assert rows[0]["text"] == NOTES[2][0] and rows[0]["source"] == NOTES[2][1]
    table = cli("memory", "list", env=env)
    assert table.returncode == 0 and ids[0][:12] in table.stdout and "[bold]1999[/bold]" in table.stdout

    shown = cli("memory", "show", ids[2][:8], env=env)  # a prefix is enough; markup is shown, not applied
    assert shown.returncode == 0, shown.stderr
    assert NOTES[2][0] in shown.stdout and ids[2] in shown.stdout and NOTES[2][1] in shown.stdout

    forgot = cli("memory", "forget", ids[2][:6], env=env)
    assert forgot.returncode == 0 and ids[2] in forgot.stdout, forgot.stderr
    assert memories(data) == [ids[1], ids[0]]

    refused = cli("memory", "clear", env=env)  # no terminal to confirm on: refused, nothing deleted
    assert refused.returncode == 2 and "--yes" in one_error_line(refused)
    assert len(memories(data)) == 2

    cleared = cli("memory", "clear", "--yes", env=env)
    assert cleared.returncode == 0 and "deleted 2 memories" in cleared.stdout
    assert memories(data) == []
    assert "no memories yet" in cli("memory", "list", env=env).stdout


def _two_ids_sharing_a_first_digit() -> list[tuple[str, str]]:
    by_digit: dict[str, tuple[str, str]] = {}
    for i in range(20):  # 16 hex digits: 17 notes are sure to share one
        note = (f"note number {i}", "src")
        digit = MemoryStore.memory_id(*note)[0]
        if digit in by_digit:
            return [by_digit[digit], note]
        by_digit[digit] = note
    raise AssertionError("unreachable")


@pytest.mark.parametrize(("args", "message"), [
    (("show",), "give a memory id"),
    (("forget",), "give the ids to forget"),
    (("show", "zz-not-hex"), "is not a memory id"),
    (("show", "0" * 30), "is not a memory id"),
    (("show", " "), "is not a memory id"),
    (("show", "{unknown}"), "no memory with id"),
    (("forget", "{first}", "{unknown}"), "nothing was deleted"),
    (("forget", "{shared}"), "matches 2 memories"),
])
def test_bad_ids_are_one_line_exit_2_and_delete_nothing(tmp_path: Path, args: tuple[str, ...], message: str):
    data = tmp_path / "data"
    ids = seed(data, _two_ids_sharing_a_first_digit())
    unknown = next(c for c in "0123456789abcdef" if not any(i.startswith(c) for i in ids)) + "0" * 7
    values = {"first": ids[0], "unknown": unknown, "shared": ids[0][0]}
    proc = cli("memory", *[a.format(**values) for a in args], env=clean_env(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert message in one_error_line(proc)
    assert sorted(memories(data)) == sorted(ids)


def test_an_empty_memory_is_reported_without_creating_folders(tmp_path: Path):
    env = clean_env(tmp_path)
    assert "no memories yet" in cli("memory", "list", env=env).stdout
    assert "already empty" in cli("memory", "clear", "--yes", env=env).stdout
    missing = cli("memory", "forget", "abc123", env=env)
    assert missing.returncode == 2 and "no memory with id 'abc123'" in one_error_line(missing)
    assert not (tmp_path / "data" / "memory").exists()
