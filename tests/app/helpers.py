"""Run the real `deepresearch` console entry point, in a child process or in-process, isolated from the user's
setup."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    """The current environment minus any DEEPRESEARCH_* setting, with config and data under `tmp`, on the base
    model (no starter adapter: tests/conftest.py; pass DEEPRESEARCH_MODEL__STARTER_ADAPTER="true" for it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPRESEARCH_")}
    env.update(XDG_CONFIG_HOME=str(tmp / "xdg-config"), XDG_CACHE_HOME=os.environ.get("XDG_CACHE_HOME", ""),
               DEEPRESEARCH_DATA_DIR=str(tmp / "data"), OMP_WAIT_POLICY="PASSIVE", HF_HUB_OFFLINE="1",
               DEEPRESEARCH_MODEL__STARTER_ADAPTER="false")
    if not env["XDG_CACHE_HOME"]:
        del env["XDG_CACHE_HOME"]  # keep the user's model cache (~/.cache) where the tests expect it
    env.update(extra)
    return env


def cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deepresearch", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single non-empty stderr line of a failed command (fails the test if there are more)."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


def in_process_cli(tmp: Path, monkeypatch: Any) -> Callable[..., Any]:
    """The real `deepresearch` app called in-process (typer's CliRunner), with a fresh data directory under `tmp`:
    `run("adapters", "soup", …)` → the result (exit_code, stdout, stderr)."""
    from deepresearch.app import settings as app_settings
    from deepresearch.app.cli import app
    from typer.testing import CliRunner

    monkeypatch.setenv("DEEPRESEARCH_DATA_DIR", str(tmp / "data"))
    monkeypatch.setattr(app_settings, "_current", None)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(map(str, args)))


def one_line_failure(result: Any, text: str) -> None:
    """An in-process command failed with exit 2 and exactly the line `error: text` on stderr."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {text}"], result.stderr


def is_extractor_request(request: dict[str, Any]) -> bool:
    """A chat request to the fake OpenAI server that asks the extractor's question (its schema has a quote)."""
    schema = ((request.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
    return "quote" in schema.get("properties", {})


def fake_model_env(tmp: Path, base_url: str) -> dict[str, str]:
    """clean_env for a run on the fake OpenAI-compatible server, one round of one planned step."""
    return clean_env(tmp, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                     DEEPRESEARCH_MODEL__BASE_URL=base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                     DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
