"""bench/compare_traces.py: two benches' model calls compared token for token, parallel calls in any order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "compare_traces.py"


def call(role: str, step: str, prompt: list[int], text: str) -> dict:
    return {"role": role, "step": step, "prompt_token_ids": prompt, "completion_token_ids": [len(text)], "text": text}


RUN = [call("planner", "planner", [1, 2], "plan"), call("extractor", "step-1", [3], "a"),
       call("extractor", "step-1", [4], "b"), call("writer", "writer", [5, 6], "Paris")]


def bench(data_dir: Path, runs: list[list[dict]]) -> Path:
    data_dir.mkdir()
    store = TraceStore(data_dir / "traces.db")
    for n, calls in enumerate(runs):
        run_id = store.start_run(f"question {n}?", {})
        for payload in calls:
            store.log_event(run_id, "llm", payload)
        store.finish_run(run_id, "finished", calls[-1]["text"], "", [], {})
    store.close()
    return data_dir


def compare(before: Path, after: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(before), str(after)], capture_output=True, text=True,
                          timeout=120)


def test_the_same_calls_compare_identical_even_when_parallel_ones_finished_in_another_order(tmp_path: Path):
    swapped = [RUN[0], RUN[2], RUN[1], RUN[3]]
    done = compare(bench(tmp_path / "a", [RUN, RUN]), bench(tmp_path / "b", [RUN, swapped]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 runs, 1 runs with the calls in the same order, 8 llm calls" in done.stdout
    assert done.stdout.strip().endswith("identical")


def test_a_different_prompt_or_completion_is_named_and_fails(tmp_path: Path):
    other_prompt = [*RUN[:3], call("writer", "writer", [5, 7], "Paris")]
    other_completion = [RUN[0], call("extractor", "step-1", [3], "c"), *RUN[2:]]
    done = compare(bench(tmp_path / "a", [RUN, RUN]), bench(tmp_path / "b", [other_prompt, other_completion]))
    assert done.returncode == 1
    assert "run 1 ('question 0?'): writer call 1 of step writer: a prompt not made after" in done.stdout
    assert "run 2 ('question 1?'): extractor call 1 of step step-1: the same prompt, another completion" in done.stdout
    assert "2 of 2 runs differ" in done.stdout


def test_bad_input_is_one_line(tmp_path: Path):
    done = compare(tmp_path / "nowhere", tmp_path / "nowhere")
    assert done.returncode == 1 and done.stderr.strip() == f"error: {tmp_path / 'nowhere'}: no traces.db there"
    other = compare(bench(tmp_path / "a", [RUN]), bench(tmp_path / "b", [RUN, RUN]))
    assert other.returncode == 1
    assert other.stderr.strip() == "error: the two traces ask different questions (1 and 2 runs)"
