"""A real eval process killed with SIGKILL mid-run, then resumed: no question run twice, none lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore

ROOT = Path(__file__).resolve().parents[2]
N = 12


def _child(args: list[Path]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_WAIT_POLICY": "PASSIVE"}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.evals.resume_child", *map(str, args)], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.is_file() else []


def test_sigkill_then_resume(tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(
        json.dumps({"id": f"q{i:02d}", "question": f"What is item {i}?", "answer": f"item{i}"}) for i in range(N)
    ) + "\n")
    out, db, log = tmp_path / "out", tmp_path / "traces.db", tmp_path / "calls.log"
    results = out / "results.jsonl"
    args = [questions, out, db, log]

    first = _child(args)
    deadline = time.monotonic() + 60
    while len(_lines(results)) < 4:
        assert first.poll() is None, first.stderr.read().decode()
        assert time.monotonic() < deadline, "the eval made no progress"
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert first.returncode == -signal.SIGKILL
    done_before = {json.loads(line)["question_id"] for line in _lines(results) if line.endswith("}")}
    assert 4 <= len(done_before) < N  # killed mid-eval

    second = _child(args)
    assert second.wait(timeout=120) == 0, second.stderr.read().decode()

    rows = [json.loads(line) for line in _lines(results)]
    per_question = Counter(r["question_id"] for r in rows)
    assert set(per_question) == {f"q{i:02d}" for i in range(N)}  # none lost
    assert max(per_question.values()) == 1  # none recorded twice
    assert all(r["scores"]["em"] == 1.0 for r in rows)
    # the resumed process never asked the model about a question finished before the kill
    calls = [line.split("\t") for line in _lines(log)]
    second_pid = str(second.pid)
    asked_after = {q for pid, q in calls if pid == second_pid}
    asked_ids = {f"q{int(q.split()[-1].rstrip('?')):02d}" for q in asked_after}
    assert not asked_ids & done_before
    assert asked_ids == {f"q{i:02d}" for i in range(N)} - done_before
    # trace store: one finished run per question, all under one eval id
    store = TraceStore(db)
    try:
        eval_id = rows[0]["eval_id"]
        finished = [r for r in store.list_runs(limit=None, tags={"eval_id": eval_id}) if r.status == "finished"]
        assert sorted(r.tags["question_id"] for r in finished) == sorted(per_question)
    finally:
        store.close()
