"""Soak (issue 72's acceptance): `deepresearch serve` and three CLI processes on one data dir for a bounded
time, with a loopback fake OpenAI-compatible model. Over HTTP: runs posted steadily (a third of them wait
for a plan decision: accepted, edited or rejected), each followed to its end on its event stream, and
hundreds of reads. From the CLI, at the same time: two `ask` loops and a reader (`runs list`, `runs show`,
`runs feedback`). The outcome must be 0 errors, 0 lost or stuck runs, and an intact store.

The default run soaks for 40 s; the 2-minute soak is marked slow (`-m slow`).
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from .fake_openai import fake_openai_server
from .servers import served_process, sse_events
from .test_serve_api import fake_env

FINAL = {"finished", "budget_stop", "loop_stop", "rejected"}


class Tally:
    """What every worker saw, kept under one lock: problems, runs started, reads done."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.problems: list[str] = []
        self.runs: dict[str, str] = {}  # run id → how it ended (as its stream or the CLI said)
        self.reads = 0

    def problem(self, what: str) -> None:
        with self.lock:
            self.problems.append(what[:500])

    def ended(self, run_id: str, status: str) -> None:
        with self.lock:
            self.runs[run_id] = status

    def read(self) -> None:
        with self.lock:
            self.reads += 1


def loop_until(deadline: float, tally: Tally, work: Callable[[int], None]) -> Callable[[], None]:
    def body() -> None:
        for i in itertools.count():
            if time.monotonic() >= deadline:
                return
            try:
                work(i)
            except Exception as exc:  # any failure of any kind is a finding, and the worker goes on
                tally.problem(f"{work.__name__} #{i}: {type(exc).__name__}: {exc}")
    return body


def follow(client: httpx.Client, run_id: str, decision: str | None, tally: Tally) -> None:
    """Read a run's event stream to its RunFinished, deciding its plan if it asks for one."""
    try:
        with client.stream("GET", f"/runs/{run_id}/events", timeout=180) as response:
            if response.status_code != 200:
                return tally.problem(f"events of {run_id}: {response.status_code}")
            for _, name, data in sse_events(response):
                if name == "ApprovalRequested":
                    body: dict[str, Any] = {"action": decision}
                    if decision == "edit":
                        body["steps"] = [{"query": "Charles Babbage"}]
                    answered = client.post(f"/runs/{run_id}/plan", json=body)
                    if answered.status_code != 200:
                        tally.problem(f"plan of {run_id}: {answered.status_code} {answered.text}")
                if name == "RunFinished":
                    return tally.ended(run_id, data["status"])
        tally.problem(f"events of {run_id} ended without RunFinished")
    except Exception as exc:
        tally.problem(f"events of {run_id}: {type(exc).__name__}: {exc}")


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deepresearch", *args], env=env, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("soak_s", [40, pytest.param(120, marks=pytest.mark.slow)], ids=["40s", "2min"])
def test_serve_and_three_cli_processes_soak_one_data_dir(tmp_path: Path, soak_s: float):
    tally = Tally()
    followers: list[threading.Thread] = []
    with fake_openai_server() as fake:
        env = fake_env(tmp_path, fake.base_url, DEEPRESEARCH_API__MAX_CONCURRENT_RUNS="3", COLUMNS="200")
        with served_process("serve", "--port", "0", env=env) as served, \
                httpx.Client(base_url=served.url, timeout=60) as client:
            deadline = time.monotonic() + soak_s

            def post(i: int) -> None:
                decision = ("accept", "edit", "reject", None, None, None)[i % 6]
                answer = client.post("/runs", json={"question": f"Who designed the Analytical Engine? ({i})",
                                                    "offline": True, "approve": decision is not None})
                if answer.status_code != 202:
                    return tally.problem(f"POST /runs: {answer.status_code} {answer.text}")
                thread = threading.Thread(target=follow, args=(client, answer.json()["id"], decision, tally))
                thread.start()
                followers.append(thread)
                time.sleep(1.5)

            def read(i: int) -> None:
                listed = client.get("/runs", params={"limit": 50})
                if listed.status_code != 200:
                    return tally.problem(f"GET /runs: {listed.status_code} {listed.text}")
                tally.read()
                runs = listed.json()
                if runs:
                    one = runs[i % len(runs)]
                    got = client.get(f"/runs/{one['id']}")
                    if got.status_code != 200:
                        return tally.problem(f"GET /runs/{one['id']}: {got.status_code} {got.text}")
                    tally.read()
                    if one["status"] == "finished":
                        report = client.get(f"/runs/{one['id']}/report", params={"format": "json"})
                        if report.status_code != 200:
                            return tally.problem(f"report of {one['id']}: {report.status_code} {report.text}")
                        tally.read()
                time.sleep(0.05)

            def ask(i: int, who: str) -> None:
                done = cli(env, "ask", "--offline", "--json", f"Who designed the Analytical Engine? ({who} {i})")
                if done.returncode != 0:
                    return tally.problem(f"ask ({who}): exit {done.returncode}: {done.stderr[-500:]}")
                result = json.loads(done.stdout)
                tally.ended(result["run_id"], result["status"])

            def ask_a(i: int) -> None:
                ask(i, "cli a")

            def ask_b(i: int) -> None:
                ask(i, "cli b")

            def inspect(i: int) -> None:
                listed = cli(env, "runs", "list", "-n", "5")
                if listed.returncode != 0 or "Traceback" in listed.stderr:
                    return tally.problem(f"runs list: exit {listed.returncode}: {listed.stderr[-500:]}")
                tally.read()
                with tally.lock:
                    known = [r for r, status in tally.runs.items() if status == "finished"]
                if known:
                    run_id = known[i % len(known)]
                    shown = cli(env, "runs", "show", run_id, "--json")
                    rated = cli(env, "runs", "feedback", run_id, "--score", "1", "--comment", f"soak {i}")
                    for what, done in (("runs show", shown), ("runs feedback", rated)):
                        if done.returncode != 0:
                            return tally.problem(f"{what} {run_id}: exit {done.returncode}: {done.stderr[-500:]}")
                    tally.read()

            workers = [threading.Thread(target=loop_until(deadline, tally, w))
                       for w in (post, read, read, ask_a, ask_b, inspect)]
            for worker in workers:
                worker.start()
            for worker in workers:
                worker.join(soak_s + 300)
            for follower in followers:
                follower.join(200)
            assert not any(t.is_alive() for t in workers + followers), "a worker is stuck"
        assert served.proc.returncode == 0 and "Traceback" not in "".join(served.output), "".join(served.output)[-3000:]

    assert tally.problems == [], "\n".join(tally.problems[:20])
    conn = sqlite3.connect(tmp_path / "data" / "traces.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = dict(conn.execute("SELECT id, status FROM runs").fetchall())
    finally:
        conn.close()
    assert set(stored) == set(tally.runs), "runs lost, or runs nobody started"
    assert all(stored[r] == status and status in FINAL for r, status in tally.runs.items()), stored
    assert {"finished", "rejected"} <= set(stored.values())
    assert len(stored) >= soak_s / 4 and tally.reads >= soak_s * 5, (len(stored), tally.reads)
