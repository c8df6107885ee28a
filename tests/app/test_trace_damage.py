"""A damaged traces.db: one line and exit 1 from every command that uses it, `doctor` says how to
recover, `runs repair` moves it aside (kept) and the next command starts a new store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from deepresearch.agent.trace.health import TraceStoreCorrupt, full_check
from deepresearch.agent.trace.store import RunNotFound, TraceStore

from .helpers import clean_env, cli, one_error_line


def _filled_store(path: Path, runs: int = 200) -> list[str]:
    store = TraceStore(path)
    ids = [store.start_run(f"question {i} " + "words " * 80, {"agent": {"x": "y" * 500}}) for i in range(runs)]
    for run_id in ids:
        store.log_event(run_id, "llm", {"messages": ["m" * 2000]})
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything into the main file
    store.close()
    return ids


DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "garbage-header": lambda data: os.urandom(100) + data[100:],
}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request, tmp_path: Path) -> Path:
    db = tmp_path / "data" / "traces.db"
    db.parent.mkdir()
    _filled_store(db)
    db.write_bytes(DAMAGE[request.param](db.read_bytes()))
    return db


@pytest.mark.parametrize("command", [("runs", "list"), ("runs", "show", "abc"), ("ask", "--offline", "q?"),
                                     ("runs", "export", "{tmp}/out.jsonl")], ids=lambda c: " ".join(c[:2]))
def test_every_command_says_damaged_in_one_line(tmp_path: Path, damaged: Path, command: tuple[str, ...]):
    before = damaged.read_bytes()
    proc = cli(*[c.format(tmp=tmp_path) for c in command], env=clean_env(tmp_path))
    assert proc.returncode == 1
    line = one_error_line(proc)
    assert f"trace store {damaged} is damaged" in line and "deepresearch runs repair" in line
    assert damaged.read_bytes() == before  # nothing written over what might still be recovered


def test_doctor_reports_it_and_repair_moves_it_aside(tmp_path: Path, damaged: Path):
    env = clean_env(tmp_path)
    before = damaged.read_bytes()
    doctor = cli("doctor", env=env)
    assert doctor.returncode == 1
    [line] = [ln for ln in doctor.stdout.splitlines() if "traces" in ln]
    assert "✘" in line and "damaged" in line and "deepresearch runs repair" in line

    repaired = cli("runs", "repair", env=env)
    assert repaired.returncode == 0, repaired.stderr
    [kept] = damaged.parent.glob("traces.db.damaged-*")
    assert kept.read_bytes() == before and str(kept) in repaired.stdout and ".recover" in repaired.stdout
    listed = cli("runs", "list", env=env)
    assert listed.returncode == 0 and "no runs yet" in listed.stdout
    assert cli("runs", "repair", env=env).stdout.startswith("trace store")  # healthy now: nothing to do
    assert full_check(damaged) is None


def test_damage_found_mid_use_is_reported_with_the_path(tmp_path: Path):
    db = tmp_path / "traces.db"
    ids = _filled_store(db)
    store = TraceStore(db)  # opens fine: the header and schema are intact
    size = db.stat().st_size
    with db.open("r+b") as fh:  # then the middle of the file is overwritten behind its back
        fh.seek(size // 2)
        fh.write(b"\xff" * (size // 4))
    with pytest.raises(TraceStoreCorrupt, match=str(db)):
        for run_id in ids:
            store.events(run_id)
    store.close()


def test_run_id_prefix_is_literal_not_a_pattern(tmp_path: Path):
    store = TraceStore(tmp_path / "traces.db")
    run_id = store.start_run("only run", {})
    for pattern in ("%", "_", run_id[:3] + "%", "_" * len(run_id), ""):
        with pytest.raises(RunNotFound):
            store.get_run(pattern)
    assert store.get_run(run_id[:4]).id == run_id
    store.close()
    env = clean_env(tmp_path, DEEPRESEARCH_DATA_DIR=str(tmp_path))
    shown = cli("runs", "show", "%", env=env)
    assert shown.returncode == 2 and "no run with id '%'" in one_error_line(shown)
    assert cli("runs", "show", run_id[:4], env=env).returncode == 0
