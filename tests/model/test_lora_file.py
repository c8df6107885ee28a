"""Plain LoRA adapters read from their files for the lean forward, without peft: the same products peft
builds (also from bf16 files and with rsLoRA's scaling), no transformers model built, and anything that is
not plain LoRA on the decoder's projections left to peft."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from deepresearch.agent.model.base import ModelError
from deepresearch.agent.model.embedded.loaders.lora_file import plain_lora_scaling, read_plain_lora
from deepresearch.agent.model.embedded.models.adapters import AdapterSet
from deepresearch.agent.model.embedded.models.llama import LlamaWeights
from safetensors.torch import load_file, save_file


@pytest.fixture(scope="module")
def weights(model_dir: Path) -> LlamaWeights:
    return LlamaWeights.load(model_dir)


def copy_adapter(src: Path, dst: Path, config_update: dict | None = None, dtype: torch.dtype | None = None,
                 extra: dict[str, torch.Tensor] | None = None) -> Path:
    shutil.copytree(src, dst)
    if config_update:
        config = json.loads((dst / "adapter_config.json").read_text())
        (dst / "adapter_config.json").write_text(json.dumps(config | config_update))
    if dtype is not None or extra:
        tensors = load_file(str(dst / "adapter_model.safetensors"))
        tensors = {k: v.to(dtype) if dtype is not None else v for k, v in tensors.items()} | (extra or {})
        save_file(tensors, str(dst / "adapter_model.safetensors"))
    return dst


def same_products(got: list, want: list, atol: float) -> bool:
    assert [sorted(layer) for layer in got] == [sorted(layer) for layer in want]
    return all(torch.allclose(g[p][0], w[p][0], atol=atol) and torch.allclose(g[p][1], w[p][1], atol=atol)
               for g, w in zip(got, want, strict=True) for p in g)


@torch.inference_mode()
def test_a_plain_adapter_loads_from_its_files_with_the_products_peft_builds(weights, lora_dir, tmp_path):
    adapters = AdapterSet(weights)
    adapters.load("a", lora_dir)
    assert adapters._peft is None and adapters._base is None  # neither peft nor transformers' model was built
    from_file = adapters._lean["a"]
    adapters.prepare(["a", None])  # transformers' path: now peft holds it too
    assert adapters._peft is not None
    assert same_products(from_file, adapters._products("a"), atol=0)
    adapters.unload("a")
    assert adapters._peft is None and adapters.names() == []

    bf16 = read_plain_lora(copy_adapter(lora_dir, tmp_path / "bf16", dtype=torch.bfloat16), weights.model.layers)
    assert bf16 is not None and all(t.dtype == torch.float32 for layer in bf16 for pair in layer.values() for t in pair)
    assert same_products(bf16, from_file, atol=2e-2)


def test_rslora_scales_by_the_square_root_of_the_rank():
    assert plain_lora_scaling({"peft_type": "LORA", "r": 16, "lora_alpha": 32}) == 2.0
    assert plain_lora_scaling({"peft_type": "LORA", "r": 16, "lora_alpha": 32, "use_rslora": True}) == 8.0


@pytest.mark.parametrize("update", [
    {"use_dora": True}, {"lora_bias": True}, {"bias": "all"}, {"rank_pattern": {"q_proj": 4}},
    {"modules_to_save": ["lm_head"]}, {"layer_replication": [[0, 4]]}, {"peft_type": "IA3"},
    {"some_future_variant": {"on": True}},
])
def test_anything_but_plain_lora_is_left_to_peft(weights, lora_dir, tmp_path, update):
    adapter = copy_adapter(lora_dir, tmp_path / "other", config_update=update)
    assert read_plain_lora(adapter, weights.model.layers) is None


def test_weights_for_other_modules_or_shapes_are_left_to_peft_which_says_what_is_wrong(weights, lora_dir, tmp_path):
    head = copy_adapter(lora_dir, tmp_path / "head", extra={
        "base_model.model.lm_head.lora_A.weight": torch.zeros(8, 576)})
    assert read_plain_lora(head, weights.model.layers) is None
    key = next(k for k in load_file(str(lora_dir / "adapter_model.safetensors")) if "q_proj.lora_A" in k)
    wrong = copy_adapter(lora_dir, tmp_path / "wrong", extra={key: torch.zeros(8, 100)})
    assert read_plain_lora(wrong, weights.model.layers) is None
    adapters = AdapterSet(weights)
    with pytest.raises(ModelError, match="cannot load adapter 'w'"):
        adapters.load("w", wrong)  # peft's own error, one line
    assert adapters.names() == [] and adapters._peft is None
