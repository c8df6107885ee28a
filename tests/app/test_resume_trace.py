"""After `kill -9` and `ask --resume`, the trace counts each call once, as an uninterrupted run's does.

The real CLI answers through a loopback model server that holds the first extractor request, so the
child is killed inside an executor step: its search is already in the trace, the step's checkpoint is
not. The resumed run runs that step again; the trainer and the evals must not see its calls twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.run.scored_run import facts_from_trace
from deepresearch.train.update.samples import samples_from_events

from .fake_openai import fake_openai_server
from .helpers import cli, fake_model_env, is_extractor_request

QUESTION = "Who designed the Analytical Engine?"




def _counts(data: Path, run_id: str) -> dict[str, Any]:
    """A run's calls as its readers count them: the trainer (usage, LLM samples) and the evals (the tool
    events their evidence is read from, usage)."""
    store = TraceStore(data / "traces.db")
    try:
        tools = store.events(run_id, "tool")
        samples, skipped = samples_from_events(run_id, "g", store.events(run_id, "llm"), 1.0)
        return {
            "reward tool_calls": facts_from_trace(store, run_id).tool_calls,
            "tool events": sorted((e.payload["tool"], json.dumps(e.payload["input"])) for e in tools),
            "llm samples": sorted((s.role, len(s.prompt_ids)) for s in samples) + [("skipped", len(skipped))],
            "findings": len(store.events(run_id, "finding")),
            "status": store.get_run(run_id).status,
        }
    finally:
        store.close()


def test_resume_after_kill_9_counts_each_call_once(tmp_path: Path):
    killed_dir, whole_dir = tmp_path / "killed", tmp_path / "whole"
    with fake_openai_server(hold=is_extractor_request) as server:
        env = fake_model_env(killed_dir, server.base_url)
        child = subprocess.Popen([sys.executable, "-m", "deepresearch", "ask", "--offline", "--quiet", "--json",
                                  QUESTION], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        deadline = time.monotonic() + 240
        try:
            while not server.held.wait(0.2):
                assert child.poll() is None, "the run ended before its first extractor call"
                assert time.monotonic() < deadline, "the run never reached an extractor call"
        finally:
            os.kill(child.pid, signal.SIGKILL)
            _, stderr = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL, stderr.decode()[-2000:]
    store = TraceStore(killed_dir / "data" / "traces.db")
    run_id = store.list_runs()[0].id
    assert store.get_run(run_id).status == "running"
    assert store.events(run_id, "tool"), "the killed step had made its search"
    store.close()

    with fake_openai_server() as server:
        resumed = cli("ask", "--resume", run_id, "--offline", "--quiet", "--json",
                      env=fake_model_env(killed_dir, server.base_url))
        assert resumed.returncode in (0, 3), resumed.stderr[-3000:]
        whole = cli("ask", "--offline", "--quiet", "--json", QUESTION, env=fake_model_env(whole_dir, server.base_url))
        assert whole.returncode in (0, 3), whole.stderr[-3000:]
    whole_id = json.loads(whole.stdout)["run_id"]

    after_resume, uninterrupted = _counts(killed_dir / "data", run_id), _counts(whole_dir / "data", whole_id)
    assert after_resume == uninterrupted
    assert uninterrupted["reward tool_calls"] > 0 and uninterrupted["tool events"]

    # The resume is marked; the superseded events are kept in the file, not deleted.
    store = TraceStore(killed_dir / "data" / "traces.db")
    marks = store.events(run_id, "resumed")
    assert len(marks) == 1 and marks[0].payload["superseded"] >= 1
    everything = store.events(run_id, superseded=True)
    assert len(everything) == len(store.events(run_id)) + marks[0].payload["superseded"]
    store.close()
