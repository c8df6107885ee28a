"""`deepresearch ask` as a user runs it: the real CLI, the embedded 135M model, the bundled demo index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deepresearch.agent.trace.store import TraceStore


def cli(*args: str, data_dir: Path, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "DEEPRESEARCH_DATA_DIR": str(data_dir), "OMP_WAIT_POLICY": "PASSIVE", **(env or {})}
    return subprocess.run([sys.executable, "-m", "deepresearch", *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a question"),
        (("   ",), "give a question"),
        (("q?", "--resume", "abc"), "not both"),
        (("q?", "--search", "bing"), "tools.search.backends.0"),
        (("q?", "--out", "/nonexistent/dir/r.md"), "does not exist"),
        (("--resume", "nosuchrun"), "no run with id 'nosuchrun'"),
        (("q?", "--index", "nosuchindex"), "no index named 'nosuchindex'"),
        (("q?", "--max-time", "0"), "--max-time"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, args, message):
    proc = cli("ask", *args, data_dir=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_config_value_names_key_and_file(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[agent.budget]\nmax_rounds = 0\n")
    proc = cli("--config", str(cfg), "ask", "q?", data_dir=tmp_path)
    assert proc.returncode == 2
    assert "agent.budget.max_rounds" in proc.stderr and str(cfg) in proc.stderr


def test_a_bad_bridge_hops_value_is_one_clear_line(tmp_path):
    proc = cli("ask", "q?", data_dir=tmp_path, timeout=120, env={"DEEPRESEARCH_AGENT__BRIDGE_HOPS": "0"})
    assert proc.returncode == 2 and "agent.bridge_hops" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_ask_with_the_embedded_model_writes_a_cited_report_and_a_complete_trace(tmp_path):
    env = {"DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS": "1", "DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS": "1"}
    out = tmp_path / "result.json"
    proc = cli("ask", "--offline", "--auto-approve", "--json", "--out", str(out),
               "In what year did the playwright who wrote The City Heiress die?", data_dir=tmp_path, env=env)
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["report"].startswith("# In what year")
    assert result["answer"]
    # The demo index holds the play's page; the model reads it and cites it, verified.
    assert result["verified_citations"] >= 1, result["report"]
    for c in result["citations"]:
        assert set(c) >= {"n", "source", "quote", "verified"}
    # Every LLM and tool call of the run is in the trace, token-exact.
    store = TraceStore(tmp_path / "traces.db")
    run = store.get_run(result["run_id"])
    assert run.status == result["status"] and run.citations == result["citations"]
    llm = store.events(run.id, "llm")
    tools = store.events(run.id, "tool")
    assert len(llm) == result["usage"]["llm_calls"]
    assert len(tools) >= result["usage"]["tool_calls"]  # + memory writes after the report
    for ev in llm:
        p = ev.payload
        assert p["prompt_token_ids"] and p["completion_token_ids"]
        assert len(p["logprobs"]) == len(p["completion_token_ids"])
        assert p["model"] and p["prompt_version"]
    assert sum(len(e.payload["prompt_token_ids"]) + len(e.payload["completion_token_ids"]) for e in llm) \
        == result["usage"]["llm_tokens"]
    # The run can be listed and exported.
    listed = cli("runs", "list", data_dir=tmp_path)
    assert run.id in listed.stdout


def test_the_readme_main_job_is_answered_from_its_evidence(tmp_path):
    # The README's main job, as pasted (default settings): the answer is a span of the evidence, cited.
    out = tmp_path / "result.json"
    proc = cli("ask", "--offline", "--auto-approve", "--json", "--out", str(out),
               "In what year did the playwright who wrote The City Heiress die?", data_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["answer"] == "1689", result["report"]
    answer_cite = result["citations"][0]
    assert answer_cite["verified"] and "1689" in answer_cite["quote"] and "Aphra Behn" in answer_cite["quote"]
    assert "**Answer:** 1689 [1]" in result["report"]


def test_the_readmes_second_example_offline_is_not_found(tmp_path):
    # The demo corpus holds nothing about the Analytical Engine: before, the answer was "U.S.A" with three verified
    # citations of sentences about steam engines and a school of engineering.
    out = tmp_path / "result.json"
    proc = cli("ask", "--offline", "--auto-approve", "--json", "--out", str(out), "Who designed the Analytical Engine?",
               data_dir=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["answer"] == "not found", result["report"]
    assert not [c for c in result["citations"] if c["verified"]]
    assert "Searched:" in result["report"]


def test_two_hops_at_once_search_two_bridge_names_and_keep_the_better_scored_answer(tmp_path):
    # agent.bridge_hops = 2 on the README's question, the real model and the starter adapter: two names searched
    # in the hop's round, each hop's evidence re-ranked apart, and the answer still the cited span.
    out = tmp_path / "result.json"
    proc = cli("ask", "--offline", "--auto-approve", "--json", "--out", str(out),
               "In what year did the playwright who wrote The City Heiress die?", data_dir=tmp_path,
               env={"DEEPRESEARCH_AGENT__BRIDGE_HOPS": "2"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    store = TraceStore(tmp_path / "traces.db")
    options = store.events(result["run_id"], "decision")[0].payload["options"]
    searched = [e.payload["input"]["query"] for e in store.events(result["run_id"], "tool")
                if e.payload["tool"] == "search"]
    assert options[0] in searched and options[1] in searched
    assert len(store.events(result["run_id"], "answer_scores")) == 2
    assert result["answer"] == "1689" and result["citations"][0]["verified"]


def test_runs_are_answered_by_the_published_adapter(tmp_path):
    from deepresearch.agent.model.policy import AdapterChoice
    from deepresearch.app.commands.ask import apply_overrides
    from deepresearch.app.runtime import answering_policy, with_served_adapter
    from deepresearch.app.settings import load_settings
    from deepresearch.train.adapters.registry import AdapterRegistry

    settings = load_settings(data_dir=tmp_path)
    assert with_served_adapter(settings).model.adapter is None  # nothing published: the base model
    registry = AdapterRegistry(settings.paths.adapters)
    registry.path("grpo-0001").mkdir(parents=True)
    (registry.path("grpo-0001") / "adapter_config.json").write_text("{}")
    registry.set_current("grpo-0001", action="publish")
    assert with_served_adapter(settings).model.adapter == "grpo-0001"
    explicit = load_settings(data_dir=tmp_path, model={"adapter": "mine"})
    assert with_served_adapter(explicit).model.adapter == "mine"  # a named adapter wins
    plain = with_served_adapter(apply_overrides(settings, model=None, search=None, adapter="base", max_time=None,
                                                auto_approve=None))
    assert plain.model.adapter == "" and answering_policy(plain).adapter == AdapterChoice.base()  # --adapter base
