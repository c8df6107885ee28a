"""No key setting is ever written or shown: the trace DB, `runs show --json` and every export format.

The real CLI answers a question through a loopback OpenAI-compatible server (which must receive the
real key, so masking cannot simply have dropped it), with every key setting set from the environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from deepresearch.agent.trace.redact import MASK, redact_secrets
from deepresearch.agent.trace.store import TraceStore

from .fake_openai import fake_openai_server
from .helpers import clean_env, cli

KEYS = {
    "DEEPRESEARCH_MODEL__API_KEY": "sk-model-5f0c1d2e3b4a",
    "DEEPRESEARCH_TOOLS__SEARCH__TAVILY_API_KEY": "tvly-9a8b7c6d5e4f",
    "DEEPRESEARCH_TOOLS__SEARCH__BRAVE_API_KEY": "brv-1122334455aa",
}


def _assert_no_key(blob: bytes, where: str) -> None:
    for value in KEYS.values():
        assert value.encode() not in blob, f"{value} found in {where}"


def test_keys_never_reach_the_trace_show_or_exports(tmp_path: Path):
    with fake_openai_server() as server:
        env = clean_env(tmp_path, **KEYS, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                        DEEPRESEARCH_MODEL__BASE_URL=server.base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                        DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
        asked = cli("ask", "--offline", "--quiet", "--json", "Who designed the Analytical Engine?", env=env)
    assert asked.returncode in (0, 1, 3), asked.stderr[-3000:]
    run_id = json.loads(asked.stdout)["run_id"]
    # The key was used where it is needed: on the wire to the model server.
    assert f"Bearer {KEYS['DEEPRESEARCH_MODEL__API_KEY']}" in server.authorizations
    _assert_no_key(asked.stdout.encode() + asked.stderr.encode(), "ask output")

    data = tmp_path / "data"
    for path in data.rglob("*"):  # traces.db, its WAL, checkpoints, indexes: every byte on disk
        if path.is_file():
            _assert_no_key(path.read_bytes(), str(path))
    store = TraceStore(data / "traces.db")
    settings = store.get_run(run_id).settings
    assert store.events(run_id, "llm")  # the run really talked to the model
    store.close()
    assert settings["model"]["api_key"] == MASK and settings["tools"]["search"]["tavily_api_key"] == MASK

    shown = cli("runs", "show", run_id, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["id"] == run_id
    _assert_no_key(shown.stdout.encode(), "runs show --json")

    for name in ("runs.jsonl", "runs.parquet"):
        exported = cli("runs", "export", str(tmp_path / name), env=env)
        assert exported.returncode == 0 and "exported 1 run(s)" in exported.stdout, exported.stderr
        _assert_no_key((tmp_path / name).read_bytes(), name)
    # Parquet pages may be compressed: also check the decoded values.
    decoded = json.dumps(pq.read_table(tmp_path / "runs.parquet").to_pylist(), default=str)
    _assert_no_key(decoded.encode(), "runs.parquet (decoded)")
    assert MASK in decoded


def test_old_or_hand_built_snapshots_are_masked_on_the_way_in_and_out(tmp_path: Path):
    snapshot = {"model": {"api_key": "sk-plain", "max_tokens": 384}, "judge": [{"auth_token": "t0k"}],
                "tools": {"search": {"brave_api_key": None, "max_results": 8}}}
    store = TraceStore(tmp_path / "traces.db")
    run_id = store.start_run("q?", snapshot)
    # A row written before keys were secret: put the plain value straight into the table.
    store._conn.execute("UPDATE runs SET settings=? WHERE id=?", (json.dumps(snapshot), run_id))
    assert store.get_run(run_id).settings == {
        "model": {"api_key": MASK, "max_tokens": 384}, "judge": [{"auth_token": MASK}],
        "tools": {"search": {"brave_api_key": None, "max_results": 8}},
    }
    store.close()
    assert redact_secrets(snapshot)["model"]["max_tokens"] == 384  # other settings are untouched


URL_KEYS = ("sk-inurl-77aa", "qk-88bb")


def test_a_key_inside_the_model_address_is_never_written_or_shown(tmp_path: Path):
    """Before: `model.base_url = http://user:sk-…@host/v1` was stored as is in the run's settings snapshot."""
    def no_url_key(blob: bytes, where: str) -> None:
        for value in URL_KEYS:
            assert value.encode() not in blob, f"{value} found in {where}"

    with fake_openai_server() as server:
        address = server.base_url.replace("http://", f"http://user:{URL_KEYS[0]}@")
        env = clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                        DEEPRESEARCH_MODEL__BASE_URL=address, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                        DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
        asked = cli("ask", "--offline", "--quiet", "--json", "Who designed the Analytical Engine?", env=env)
    assert asked.returncode in (0, 1, 3), asked.stderr[-3000:]
    assert server.authorizations  # the address, key and all, was used to reach the model server
    run_id = json.loads(asked.stdout)["run_id"]
    # A model server that cannot be reached: its address is in the error, shown and stored.
    env["DEEPRESEARCH_MODEL__BASE_URL"] = f"http://user:{URL_KEYS[0]}@127.0.0.1:9/v1?key={URL_KEYS[1]}"
    env["DEEPRESEARCH_MODEL__MAX_RETRIES"] = "0"
    failed = cli("ask", "--offline", "--quiet", "--json", "Who designed the Analytical Engine?", env=env)
    assert failed.returncode != 0 and "127.0.0.1:9" in failed.stdout + failed.stderr, failed.stderr[-3000:]
    for proc, where in ((asked, "ask"), (failed, "the failed ask")):
        no_url_key(proc.stdout.encode() + proc.stderr.encode(), f"{where}'s output")
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            no_url_key(path.read_bytes(), str(path))
    store = TraceStore(tmp_path / "data" / "traces.db")
    settings = store.get_run(run_id).settings
    store.close()
    assert settings["model"]["base_url"] == server.base_url.replace("http://", f"http://{MASK}@")
    shown = cli("runs", "show", run_id, "--json", env=env)
    exported = cli("runs", "export", str(tmp_path / "runs.jsonl"), env=env)
    assert shown.returncode == 0 and exported.returncode == 0, shown.stderr + exported.stderr
    no_url_key(shown.stdout.encode() + (tmp_path / "runs.jsonl").read_bytes(), "runs show and export")


def test_keys_in_addresses_are_masked_in_hand_built_snapshots():
    snapshot = {"model": {"base_url": "https://u:p4ss@api.example/v1?key=k3y&region=eu"},
                "tools": {"search": {"searxng_url": "http://tok3n@search.lan/?access_token=a7&q=1"}}, "note": "plain"}
    assert redact_secrets(snapshot) == {
        "model": {"base_url": f"https://{MASK}@api.example/v1?key={MASK}&region=eu"},
        "tools": {"search": {"searxng_url": f"http://{MASK}@search.lan/?access_token={MASK}&q=1"}}, "note": "plain"}
