"""The starter adapter shipped in the package: installed and served on a fresh data directory, listed with
where it came from, left alone once a registry exists, and `adapters use base` returns to the plain model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.agent.trace.store import TraceStore
from deepresearch.train.adapters.registry import AdapterRegistry, read_metadata
from deepresearch.train.adapters.starter import STARTER_NAME, install_starter, packaged_starter

from ..app.helpers import clean_env, cli, one_error_line

QUESTION = "In what year did the playwright who wrote The City Heiress die?"


def starter_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(tmp_path, **{"DEEPRESEARCH_MODEL__STARTER_ADAPTER": "true", **extra})


def test_the_package_ships_a_small_plain_lora_adapter_with_its_provenance():
    folder = packaged_starter()
    assert folder is not None
    size = sum(f.stat().st_size for f in folder.iterdir())
    assert size <= 20_000_000  # issue 13: a starter adapter ships only if it is at most 20 MB
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and not config["use_dora"] and not config["use_rslora"]
    assert "/" not in config["base_model_name_or_path"]  # no path of the machine it was built on
    meta = read_metadata(folder)
    assert set(meta["roles"]) == {"answer", "bridge"}
    assert meta["origin"] and "dev/results/" in meta["origin"]
    gate = meta["eval"]
    assert gate["passed"] and gate["candidate_score"] > gate["baseline_score"] and gate["ci_low"] > 0


def test_a_fresh_data_directory_gets_the_starter_once_and_a_registry_is_never_overridden(tmp_path):
    adapters = tmp_path / "adapters"
    assert install_starter(adapters) == STARTER_NAME
    registry = AdapterRegistry(adapters)
    assert registry.current == STARTER_NAME and registry.state().log[-1]["action"] == "starter"
    assert not [p for p in adapters.iterdir() if p.name.startswith(".")]  # no staging folder left behind
    assert registry.choice(STARTER_NAME).roles == frozenset({"answer", "bridge"})

    registry.set_current(None, action="use")  # `adapters use base`
    assert install_starter(adapters) is None  # the registry exists: the user's choice stands
    assert registry.current is None

    untouched = tmp_path / "theirs"
    AdapterRegistry(untouched).set_current(None)
    assert install_starter(untouched) is None and not (untouched / STARTER_NAME).exists()


def test_no_starter_for_another_model_or_when_switched_off(tmp_path):
    from deepresearch.app.runtime import with_served_adapter
    from deepresearch.app.settings import Settings

    other = Settings(data_dir=tmp_path / "a", model={"starter_adapter": True, "name": "Qwen3-8B"})
    assert with_served_adapter(other).model.adapter is None and not other.paths.adapters.exists()
    off = Settings(data_dir=tmp_path / "b", model={"starter_adapter": False})
    assert with_served_adapter(off).model.adapter is None and not off.paths.adapters.exists()
    on = Settings(data_dir=tmp_path / "c", model={"starter_adapter": True})
    assert with_served_adapter(on).model.adapter == STARTER_NAME


def test_adapters_list_shows_where_the_starter_came_from_and_use_base_returns_to_the_plain_model(tmp_path):
    env = starter_env(tmp_path)
    listed = cli("adapters", "list", env=env, timeout=120)
    assert listed.returncode == 0, listed.stderr
    first, origin = listed.stdout.splitlines()[:2]
    assert first.startswith(f"* {STARTER_NAME} ") and "passed" in first
    assert "dev/results/" in origin
    used = cli("adapters", "use", "base", env=env, timeout=120)
    assert used.returncode == 0 and "serving the base model" in used.stdout, used.stderr
    again = cli("adapters", "list", env=env, timeout=120)
    assert again.stdout.startswith(f"  {STARTER_NAME} ")  # still listed, no longer served
    back = cli("adapters", "use", STARTER_NAME, env=env, timeout=120)
    assert back.returncode == 0 and STARTER_NAME in back.stdout


def test_a_bad_starter_setting_is_one_clear_line(tmp_path):
    proc = cli("adapters", "list", env=starter_env(tmp_path, DEEPRESEARCH_MODEL__STARTER_ADAPTER="maybe"),
               timeout=120)
    assert proc.returncode == 2
    assert "model.starter_adapter" in one_error_line(proc)


@pytest.mark.parametrize("adapter_flag", [(), ("--adapter", "base")])
def test_a_new_users_first_ask_answers_with_the_starter_and_base_stays_available(tmp_path, adapter_flag):
    out = tmp_path / "result.json"
    proc = cli("ask", "--offline", "--auto-approve", "--json", "--out", str(out), *adapter_flag, QUESTION,
               env=starter_env(tmp_path), timeout=600)
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "1689" in result["answer"]
    store = TraceStore(tmp_path / "data" / "traces.db")
    try:
        run = store.list_runs()[0]
        calls = [e.payload for e in store.events(run.id, kind="llm")]
        answer_scores = [e.payload for e in store.events(run.id, kind="answer_scores")]
    finally:
        store.close()
    assert calls and answer_scores
    assert not any(c.get("adapter") for c in calls)  # planner, executor, writer: the base model either way
    if adapter_flag:
        assert result["adapter"] in ("", None) and all(s["adapter"] == "" for s in answer_scores)
    else:
        # The starter answers for the roles it was trained for: the answer's choice among the candidates.
        assert result["adapter"] == STARTER_NAME and all(s["adapter"] == STARTER_NAME for s in answer_scores)
