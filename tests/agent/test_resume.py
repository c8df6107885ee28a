"""Resume after kill -9: a real subprocess is killed mid-run; the run continues from its checkpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from deepresearch.agent.graph.run import ResearchRuntime, ResumeError, RunOptions, research
from deepresearch.agent.trace.store import TraceStore

from .conftest import DOCS, agent_settings, default_script
from .fakes import DictToolbox, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]


def start_and_kill(tmp_path: Path) -> tuple[Path, Path, str]:
    traces, ckpt, marker = tmp_path / "traces.db", tmp_path / "ckpt.db", tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-m", "tests.agent.resume_child", str(traces), str(ckpt), str(marker)],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not marker.exists():
        if child.poll() is not None or time.time() > deadline:
            child.kill()
            pytest.fail(f"child ended early: {child.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    run_id = TraceStore(traces).list_runs()[0].id
    return traces, ckpt, run_id


async def test_resume_after_kill_9(tmp_path):
    traces, ckpt, run_id = start_and_kill(tmp_path)
    store = TraceStore(traces)
    before = store.events(run_id)
    assert store.get_run(run_id).status == "running"
    assert sum(e.kind == "finding" for e in before) >= 2  # executors' work was committed before the kill

    model, toolbox = ScriptedModel(default_script()), DictToolbox(DOCS)
    result = await research(None, ResearchRuntime(model, toolbox, store, agent_settings()),
                            options=RunOptions(checkpoint_path=ckpt, resume_run_id=run_id))
    assert result.status == "finished" and result.verified_citations >= 2
    # Only the writer ran again: no re-planning, no repeated tool calls.
    assert [role for role, _ in model.requests] == ["writer"]
    assert toolbox.invocations == []
    assert store.get_run(run_id).status == "finished"


async def test_resume_refuses_a_finished_run(tmp_path, store, toolbox):
    runtime = ResearchRuntime(ScriptedModel(default_script()), toolbox, store, agent_settings())
    result = await research("q?", runtime, options=RunOptions(checkpoint_path=tmp_path / "c.db"))
    with pytest.raises(ResumeError, match="already ended"):
        await research(None, runtime, options=RunOptions(checkpoint_path=tmp_path / "c.db",
                                                         resume_run_id=result.run_id))
