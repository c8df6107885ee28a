"""serve-model plumbing that needs no vLLM: the command line, stopping a process group, CLI bad input."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import typer
from deepresearch.agent.model.remote.server import (
    VLLM_LAUNCHER,
    VLLMServer,
    VLLMServeSettings,
    default_vllm_venv,
    vllm_command,
    vllm_env,
)
from typer.testing import CliRunner


def test_command_serves_fp32_with_runtime_lora_and_processed_logprobs(tmp_path):
    serve = VLLMServeSettings(venv=tmp_path / "v", port=8123)
    command = vllm_command(serve, "/models/m", "m")
    assert command[:2] == [str(tmp_path / "v" / "bin" / "python"), str(VLLM_LAUNCHER)]
    assert 'run_module("vllm.entrypoints.openai.api_server"' in VLLM_LAUNCHER.read_text()
    joined = " ".join(command)
    for flag in ("--dtype float32", "--enable-lora", "--port 8123", "--served-model-name m",
                 "--logprobs-mode processed_logprobs"):  # fmt: skip
        assert flag in joined
    assert vllm_env(serve)["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"
    assert serve.base_url == "http://127.0.0.1:8123/v1"


def test_a_source_checkout_keeps_vllm_in_its_own_dot_venv_vllm():
    checkout = Path(__file__).resolve().parents[2]  # tests/model/ -> the checkout
    assert default_vllm_venv() == checkout / ".venv-vllm"


def test_dtype_auto_is_bf16_on_a_gpu_and_fp32_on_a_cpu(tmp_path, monkeypatch):
    import torch

    def dtype(**kw) -> str:
        command = vllm_command(VLLMServeSettings(venv=tmp_path, **kw), "/models/m", "m")
        return command[command.index("--dtype") + 1]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dtype() == "float32"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dtype() == "bfloat16"
    assert dtype(dtype="float16") == "float16"  # an explicit choice wins


def test_the_server_is_offline_unless_the_user_says_otherwise(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    env = vllm_env(VLLMServeSettings(venv=tmp_path))
    assert env["HF_HUB_OFFLINE"] == "1" and env["TRANSFORMERS_OFFLINE"] == "1"
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # a GPU box pulling MODEL from the hub
    env = vllm_env(VLLMServeSettings(venv=tmp_path))
    assert env["HF_HUB_OFFLINE"] == "0" and env["TRANSFORMERS_OFFLINE"] == "0"


def test_stop_ends_the_server_and_its_children(tmp_path):
    # A stand-in for vLLM's API server + engine-core child: a process that spawns a child and ignores SIGTERM.
    child_pid_file = tmp_path / "child.pid"
    script = (
        "import signal, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(child_pid_file)!r}, 'w').write(str(child.pid))\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "time.sleep(600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    server = VLLMServer(process, "http://127.0.0.1:1/v1", tmp_path / "log")
    deadline = time.monotonic() + 20
    while not child_pid_file.exists() or not child_pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = int(child_pid_file.read_text())
    server.stop(grace_s=1.0)
    assert process.poll() is not None
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or "zombie" in Path(f"/proc/{child}/status").read_text().lower()


def test_serve_model_without_vllm_is_one_clear_error(tmp_path, monkeypatch):
    from deepresearch.app.commands import model as model_command

    monkeypatch.setenv("DEEPRESEARCH_DATA_DIR", str(tmp_path / "data"))
    app = typer.Typer()
    model_command.register(app)
    app.command("noop")(lambda: None)  # a second command keeps `serve-model` a named subcommand
    result = CliRunner().invoke(app, ["serve-model", "--venv", str(tmp_path / "no-venv")])
    assert result.exit_code == 2
    assert "vLLM is not installed in" in result.output and "--install" in result.output
    assert len(result.output.strip().splitlines()) == 1
    bad_port = CliRunner().invoke(app, ["serve-model", "--port", "70000"])
    assert bad_port.exit_code == 2
