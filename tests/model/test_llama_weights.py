"""The embedded model's weights read without transformers' model classes (embedded/models/llama.py), with the real
SmolLM2-135M: transformers' own tensors and RoPE frequencies, one set of parameters once transformers' model
is built for an adapter, no slow imports on the way, and a clear error for a broken model directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from deepresearch.agent.model.base import ModelError
from deepresearch.agent.model.embedded.layers.forward import LeanForward, supports
from deepresearch.agent.model.embedded.models.llama import LlamaWeights

from .test_embedded_forward import real_columns, run, transformers_logits


@pytest.fixture(scope="module")
def weights(model_dir: Path) -> LlamaWeights:
    return LlamaWeights.load(model_dir)


def test_the_weights_and_rope_are_transformers_own(weights, hf_model):
    ours = weights.state_dict()
    theirs = hf_model.state_dict()
    assert ours.keys() == theirs.keys()
    assert all(torch.equal(ours[name], theirs[name]) for name in theirs)
    assert torch.equal(weights.model.rotary_emb.inv_freq, hf_model.model.rotary_emb.inv_freq)
    assert weights.lm_head.weight is weights.model.embed_tokens.weight  # tied, as in the checkpoint
    assert supports(weights)


@torch.inference_mode()
def test_the_lean_forward_on_these_weights_gives_transformers_logits(weights, hf_model):
    expected = run(lambda *a: transformers_logits(hf_model, *a), hf_model)
    got = run(LeanForward(weights), weights)
    for e, g in zip(real_columns(expected), real_columns(got), strict=True):
        # fp32 rounding only: the products run in other GEMM kernels (OpenBLAS on column-major weights)
        assert torch.allclose(e, g, atol=5e-4), float((e - g).abs().max())


def test_transformers_model_is_built_on_the_same_parameters(model_dir):
    weights = LlamaWeights.load(model_dir)
    model = weights.transformers()
    assert weights.transformers() is model  # built once
    mine = dict(weights.named_parameters(remove_duplicate=False))
    for name, param in model.named_parameters(remove_duplicate=False):
        assert mine[name] is param, name  # an adapter merged into one is in the other
    assert "_transformers" not in dict(weights.named_modules())  # not a submodule: no second state dict


def test_loading_imports_no_model_classes_of_transformers(model_dir):
    script = (
        "import sys\n"
        "from deepresearch.agent.model.embedded.models.llama import LlamaWeights\n"
        f"LlamaWeights.load({str(model_dir)!r})\n"
        "slow = ['transformers.models.llama.modeling_llama', 'torch._dynamo', 'triton']\n"
        "print([m for m in slow if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def broken_copy(model_dir: Path, target: Path, **config_changes: object) -> Path:
    target.mkdir()
    config = json.loads((model_dir / "config.json").read_text())
    (target / "config.json").write_text(json.dumps({**config, **config_changes}))
    (target / "model.safetensors").symlink_to(model_dir / "model.safetensors")
    return target


def test_a_broken_model_directory_is_a_clear_error(model_dir, tmp_path):
    with pytest.raises(ModelError, match="do not fit its config"):
        LlamaWeights.load(broken_copy(model_dir, tmp_path / "layers", num_hidden_layers=31))
    missing = broken_copy(model_dir, tmp_path / "missing")
    (missing / "model.safetensors").unlink()
    with pytest.raises(ModelError, match="cannot read the model weights"):
        LlamaWeights.load(missing)
    garbled = broken_copy(model_dir, tmp_path / "garbled")
    (garbled / "config.json").write_text("{not json")
    with pytest.raises(ModelError, match="cannot read the model config"):
        LlamaWeights.load(garbled)
