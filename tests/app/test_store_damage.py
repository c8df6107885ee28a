"""Every SQLite store of the data dir, not only traces.db: a damaged checkpoints.db (or search cache, index,
memory) is named in one line, no run is left "running", `doctor` reports it and `runs repair` moves it aside
(kept), after which the next `ask` works. The real CLI against the loopback model server."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from deepresearch.agent.graph.events import FindingMade
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions, research
from deepresearch.agent.trace.store import TraceStore
from deepresearch.tools.sqlite_health import StoreDamaged

from ..agent.conftest import DOCS, agent_settings, default_script
from ..agent.fakes import DictToolbox, ScriptedModel
from .fake_openai import fake_openai_server
from .helpers import cli, one_error_line
from .helpers import fake_model_env as _env

QUESTION = "Who designed the Analytical Engine?"


def _overwrite(path: Path) -> None:
    """The file and its WAL companions overwritten, as a bad copy or a stray write would leave them."""
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if part.exists():
            part.write_bytes(b"\xff" * max(4096, part.stat().st_size))


def _statuses(data: Path) -> list[str]:
    store = TraceStore(data / "traces.db")
    try:
        return [run.status for run in store.list_runs(limit=None)]
    finally:
        store.close()


def _stores_line(doctor_stdout: str) -> str:
    [line] = [ln for ln in doctor_stdout.splitlines() if " stores " in ln]
    return line


def test_a_damaged_checkpoint_store_is_named_and_repaired(tmp_path: Path):
    data = tmp_path / "data"
    with fake_openai_server() as server:
        env = _env(tmp_path, server.base_url)
        first = cli("ask", "--offline", "--quiet", QUESTION, env=env)
        assert first.returncode in (0, 3), first.stderr[-3000:]
        _overwrite(data / "checkpoints.db")

        failed = cli("ask", "--offline", "--quiet", QUESTION, env=env)
        assert failed.returncode == 1
        line = one_error_line(failed)
        assert f"checkpoint store {data / 'checkpoints.db'} is damaged" in line and "runs repair" in line
        assert "running" not in _statuses(data)

        doctor = cli("doctor", env=env)
        assert "✘" in _stores_line(doctor.stdout) and "checkpoints.db is damaged" in _stores_line(doctor.stdout)
        repaired = cli("runs", "repair", env=env)
        assert repaired.returncode == 0, repaired.stderr
        [kept] = data.glob("checkpoints.db.damaged-*")
        assert f"moved the checkpoint store to {kept}" in repaired.stdout
        assert repaired.stdout.startswith("trace store")  # the healthy ones say so, the trace store first

        again = cli("ask", "--offline", "--quiet", QUESTION, env=env)
        assert again.returncode in (0, 3), again.stderr[-3000:]
        assert "✔" in _stores_line(cli("doctor", env=env).stdout)


def test_search_cache_index_and_memory_damage_is_found_and_moved_aside(tmp_path: Path):
    data = tmp_path / "data"
    damaged = {"search cache": data / "cache" / "search.sqlite", "index 'demo'": data / "indexes" / "demo" /
               "bm25.sqlite", "memory": data / "memory" / "chroma.sqlite3"}
    with fake_openai_server() as server:
        env = _env(tmp_path, server.base_url)
        assert cli("ask", "--offline", "--quiet", QUESTION, env=env).returncode in (0, 3)
        for path in damaged.values():
            assert path.is_file(), path
            _overwrite(path)

        asked = cli("ask", "--offline", "--quiet", QUESTION, env=env)  # a library's own error, named by its store
        assert asked.returncode == 1 and f"search cache {damaged['search cache']} is damaged (" in one_error_line(asked)
        line = _stores_line(cli("doctor", env=env).stdout)
        for what, path in damaged.items():
            assert f"{what} {path} is damaged" in line, line

        repaired = cli("runs", "repair", env=env)
        assert repaired.returncode == 0, repaired.stderr
        assert list((data / "cache").glob("search.sqlite.damaged-*"))
        assert list(data.glob("index-demo.damaged-*")) and list(data.glob("memory.damaged-*"))
        assert repaired.stdout.count("moved the ") == 3, repaired.stdout
        assert "moved the index 'demo' to " in repaired.stdout and "built again on its next use" in repaired.stdout

        again = cli("ask", "--offline", "--quiet", QUESTION, env=env)  # the demo index is built again
        assert again.returncode in (0, 3), again.stderr[-3000:]


def test_damage_met_mid_run_ends_the_run_and_names_the_checkpoint_store(tmp_path: Path):
    checkpoints = tmp_path / "checkpoints.db"
    store = TraceStore(tmp_path / "traces.db")
    damaged: list[bool] = []

    def damage_once(event: object) -> None:
        if isinstance(event, FindingMade) and not damaged:
            damaged.append(True)
            _overwrite(checkpoints)

    runtime = ResearchRuntime(ScriptedModel(default_script()), DictToolbox(dict(DOCS)), store, agent_settings())
    with pytest.raises(StoreDamaged, match=f"checkpoint store {checkpoints} is damaged"):
        asyncio.run(research("When was Ada Lovelace born?", runtime,
                             options=RunOptions(checkpoint_path=checkpoints, on_event=damage_once)))
    assert [run.status for run in store.list_runs()] == ["error"]
    store.close()


def test_any_exception_ends_the_run_and_a_cancel_leaves_it_interrupted(tmp_path: Path):
    store = TraceStore(tmp_path / "traces.db")
    runtime = ResearchRuntime(ScriptedModel(default_script()), DictToolbox(dict(DOCS)), store, agent_settings())

    def broken(event: object) -> None:
        raise RuntimeError("a progress display failed")

    with pytest.raises(RuntimeError):
        asyncio.run(research("q one?", runtime, options=RunOptions(on_event=broken, run_id="broken")))

    async def cancelled() -> None:
        def cancel(event: object) -> None:
            task.cancel()

        task = asyncio.current_task()
        await research("q two?", runtime, options=RunOptions(on_event=cancel, run_id="cancelled"))

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancelled())
    assert {run.id: run.status for run in store.list_runs()} == {"broken": "error", "cancelled": "interrupted"}
    store.close()
