"""bf16 products for the lean forward's long steps (embedded/layers/bf16.py): the setting, the probe's kept verdict,
the products themselves, and on the real SmolLM2-135M a bf16 prefill against the fp32 one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from deepresearch.agent.model.embedded.kernels.gguf_blocks import GGUF_MAX_ROWS
from deepresearch.agent.model.embedded.layers import bf16 as bf16_layer
from deepresearch.agent.model.embedded.layers.bf16 import PROBE_FILE, bf16_product, probe_verdict, use_bf16
from deepresearch.agent.model.embedded.layers.forward import LeanForward
from deepresearch.agent.model.embedded.layers.products import JointProduct
from torch import nn

from .test_embedded_forward import run


def test_on_and_off_decide_without_probing(monkeypatch):
    monkeypatch.setattr(bf16_layer, "probe", lambda threads: pytest.fail("probed"))
    assert use_bf16("on", 2) is True
    assert use_bf16("off", 2) is False


def test_auto_probes_once_and_keeps_the_verdict(tmp_path: Path, monkeypatch):
    calls = []

    def probe(threads: int) -> dict[str, float]:
        calls.append(threads)
        return {"fp32_s": 0.002, "bf16_s": 0.0005}

    monkeypatch.setattr(bf16_layer, "probe", probe)
    assert use_bf16("auto", 2, tmp_path) is True
    assert use_bf16("auto", 2, tmp_path) is True
    assert calls == [2]  # the second start read the kept verdict
    kept = json.loads((tmp_path / PROBE_FILE).read_text())
    assert kept["bf16"] is True and kept["fp32_s"] == 0.002
    assert probe_verdict(2, tmp_path) == (True, {"fp32_s": 0.002, "bf16_s": 0.0005})
    assert use_bf16("auto", 1, tmp_path) is True and calls == [2, 1]  # other threads: another identity


def test_a_slow_or_unclear_bf16_is_not_chosen(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(bf16_layer, "probe", lambda threads: {"fp32_s": 0.002, "bf16_s": 0.0015})
    assert use_bf16("auto", 2, tmp_path) is False  # 75 % of fp32's time: not clearly faster


def test_a_damaged_verdict_file_is_probed_again(tmp_path: Path, monkeypatch):
    (tmp_path / PROBE_FILE).write_text("{not json")
    monkeypatch.setattr(bf16_layer, "probe", lambda threads: {"fp32_s": 0.002, "bf16_s": 0.0005})
    assert use_bf16("auto", 2, tmp_path) is True
    assert json.loads((tmp_path / PROBE_FILE).read_text())["bf16"] is True


def test_the_real_probe_times_both_products():
    on, timings = probe_verdict(1)
    assert timings["fp32_s"] > 0 and timings["bf16_s"] > 0
    assert on == (timings["bf16_s"] <= bf16_layer.PROBE_MAX_SHARE * timings["fp32_s"])


def test_a_bf16_product_is_close_to_fp32():
    torch.manual_seed(0)
    x, w = torch.randn(40, 64), torch.randn(64, 32)
    got = bf16_product(x, w.to(torch.bfloat16), threads=2)
    assert got.dtype == torch.float32 and torch.get_num_threads() >= 1
    expected = x @ w
    assert (got - expected).norm() / expected.norm() < 1e-2
    assert not torch.equal(got, expected)  # it really was rounded


def test_a_joint_product_takes_bf16_only_past_the_blocks_rows():
    torch.manual_seed(0)
    layers = [nn.Linear(64, 48, bias=False).requires_grad_(False), nn.Linear(64, 16, bias=False).requires_grad_(False)]
    joint = JointProduct(layers)
    weight = joint.weight()
    few, many = torch.randn(GGUF_MAX_ROWS, 64), torch.randn(GGUF_MAX_ROWS + 1, 64)
    assert torch.allclose(joint(few, bf16_threads=2), few @ weight.T, atol=1e-5)  # fp32: OpenBLAS
    wide = joint(many, bf16_threads=2)
    assert torch.equal(wide, bf16_product(many, weight.T.to(torch.bfloat16), 2))
    assert torch.allclose(joint(many), many @ weight.T, atol=1e-5)  # off: fp32
    layers[1].weight.data = torch.randn(16, 64)  # replaced: laid out again, and a new bf16 copy
    assert torch.equal(joint(many, bf16_threads=2)[:, 48:],
                       bf16_product(many, layers[1].weight.T.to(torch.bfloat16), 2))


@torch.inference_mode()
def test_a_bf16_prefill_gives_nearly_the_fp32_logits(hf_model):
    """A 40-token prefill (past the blocks' rows) then decode steps: the next-token choice is the same and the
    log-probabilities within a few hundredths of a nat; the decode steps' own products stay fp32."""
    torch.manual_seed(0)
    prompt = torch.randint(10, 40_000, (40,)).tolist()
    fp32, bf16 = LeanForward(hf_model), LeanForward(hf_model, bf16_threads=2)
    steps = [([prompt, prompt[:30]], 1), ([[11], [12]], 1), ([[13], [14]], 1)]
    expected, got = run(fp32, hf_model, steps), run(bf16, hf_model, steps)
    for e, g in zip(expected, got, strict=True):
        assert torch.equal(e.argmax(-1), g.argmax(-1))
        gap = (e.log_softmax(-1) - g.log_softmax(-1)).abs()
        assert gap.max() > 0  # the prefill was rounded
        top = e.log_softmax(-1) > -5  # the tokens with a real chance
        assert gap[top].max() < 0.2, float(gap[top].max())
        assert gap[top].mean() < 0.05, float(gap[top].mean())


def test_a_long_attention_call_runs_in_bf16_and_a_short_one_falls_back():
    from deepresearch.agent.model.embedded.layers.bf16 import Bf16Attention
    from deepresearch.agent.model.embedded.layers.split_attention import sdpa

    torch.manual_seed(0)
    keys, values = torch.randn(1, 3, 90, 64), torch.randn(1, 3, 90, 64)
    visible = torch.ones(60, 90, dtype=torch.bool).tril(30)
    bias = torch.zeros(1, 1, 60, 90).masked_fill(~visible, float("-inf"))
    attend = Bf16Attention(sdpa, threads=2, min_queries=50)
    q = torch.randn(1, 3, 60, 64)
    expected = sdpa(q, keys, values, bias)
    got = attend(q, keys, values, bias)
    assert got.dtype == torch.float32 and not torch.equal(got, expected)
    assert (got - expected).norm() / expected.norm() < 2e-2
    # The output of the bf16 scores turned to fp32, scaled, masked and softmaxed there, but for a rare
    # probability rounded to the other bf16 neighbour.
    bf16 = torch.bfloat16
    scores = torch.matmul(q.to(bf16), keys.to(bf16).transpose(-1, -2)).float() * 64**-0.5 + bias
    before = torch.matmul(torch.softmax(scores, -1).to(bf16), values.to(bf16)).float()
    assert (got == before).float().mean() > 0.999 and (got - before).abs().max() < 2e-3
    short = q[:, :, :40]
    assert torch.equal(attend(short, keys, values, bias[:, :, :40]), sdpa(short, keys, values, bias[:, :, :40]))
    whole = attend(q, keys, values, None)  # no mask: every key seen
    assert (whole - sdpa(q, keys, values, None)).norm() / whole.norm() < 2e-2
