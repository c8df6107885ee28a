"""The sequence that destroyed a new user's traces.db twice: the TUI with plan review on, a second terminal
running `deepresearch runs list` and `runs show` against the same data dir, then a second question. Driven
headless here with real second processes reading the store the whole time; the store must stay intact."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore

from .test_tui import make_app
from .test_tui_actions import review_plan, until

# The second terminal: `runs list`, then `runs show` of the newest run, again and again (the real CLI).
SECOND_TERMINAL = """
import os, re, subprocess, sys
stop, progress, failures = sys.argv[1], sys.argv[2], []
shown = 0
while not os.path.exists(stop):
    listed = subprocess.run([sys.executable, "-m", "deepresearch", "runs", "list"], capture_output=True, text=True)
    if listed.returncode != 0:
        failures.append(listed.stderr)
    ids = re.findall(r"[0-9a-f]{12}", listed.stdout)
    if ids:
        show = subprocess.run([sys.executable, "-m", "deepresearch", "runs", "show", ids[0]], capture_output=True,
                              text=True)
        shown += show.returncode == 0
        if show.returncode != 0:
            failures.append(show.stderr)
        with open(progress, "w") as fh:
            fh.write(str(shown))
sys.exit("".join(failures)[-3000:] if failures else 0)
"""

# A reader as fast as a process can open, list and close the store: the pattern that lost the WAL.
QUICK_READER = """
import os, sys
from deepresearch.agent.trace.store import TraceStore
while not os.path.exists(sys.argv[2]):
    store = TraceStore(sys.argv[1])
    store.list_runs(limit=20)
    store.close()
"""


def _spawn(script: str, *args: str, data: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPRESEARCH_")}
    env.update(DEEPRESEARCH_DATA_DIR=str(data), DEEPRESEARCH_MODEL__STARTER_ADAPTER="false", OMP_WAIT_POLICY="PASSIVE")
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


async def test_plan_review_beside_a_second_terminal_then_a_second_question(tmp_path: Path):
    db, stop, progress = tmp_path / "traces.db", tmp_path / "stop", tmp_path / "shown"
    store = TraceStore(db)
    app = make_app(tmp_path, store)  # data dir = tmp_path: the TUI's runs, checkpoints and the readers share it
    readers = [_spawn(SECOND_TERMINAL, str(stop), str(progress), data=tmp_path),
               _spawn(QUICK_READER, str(db), str(stop), data=tmp_path)]

    def shown() -> int:
        return int(progress.read_text() or 0) if progress.exists() else 0

    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await review_plan(app, pilot)  # plan review on, the first question waits for it
            first = app.live.run_id
            await until(pilot, lambda: shown() >= 1, timeout_s=120)  # the second terminal shows it meanwhile
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.click("#question")
            await pilot.press(*"Who designed the Analytical Engine?", "enter")
            await until(pilot, lambda: app.live is not None and app.live.status == "awaiting_approval")
            second = app.live.run_id
            await pilot.press("ctrl+s")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert app.crash is None
    finally:
        stop.touch()
        outputs = [reader.communicate(timeout=120) for reader in readers]
    for reader, (_, err) in zip(readers, outputs, strict=True):
        assert reader.returncode == 0, err[-3000:]
    assert {run.id: run.status for run in store.list_runs()} == {first: "finished", second: "finished"}
    assert all(store.events(run_id, "llm") for run_id in (first, second))
    store.close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
