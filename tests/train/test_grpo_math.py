"""The GRPO maths on hand-computed cases: every expected number here was worked out on paper."""

from __future__ import annotations

import math

import pytest
import torch
from deepresearch.train.config import GRPOSettings
from deepresearch.train.update.grpo import TokenBatch, group_advantages, grpo_loss, loss_normaliser


def flat_batch(lengths: list[int], advantages: list[float], weights: list[float] | None = None,
               sampling_logps: list[float] | None = None) -> TokenBatch:
    """A TokenBatch whose per-token layout is all grpo_loss reads (no model involved)."""
    rows = [b for b, n in enumerate(lengths) for _ in range(n)]
    n = len(rows)
    return TokenBatch(
        input_ids=torch.zeros(len(lengths), 1, dtype=torch.long),
        attention_mask=torch.ones(len(lengths), 1, dtype=torch.long),
        token_rows=torch.tensor(rows), token_pred_pos=torch.zeros(n, dtype=torch.long),
        token_ids=torch.zeros(n, dtype=torch.long),
        sampling_logps=torch.tensor(sampling_logps if sampling_logps is not None else [0.0] * n),
        advantages=torch.tensor(advantages, dtype=torch.float32),
        weights=torch.tensor(weights or [1.0] * len(lengths)),
    )


def grad_of_loss(log_ratios: list[float], batch: TokenBatch, cfg: GRPOSettings, normaliser: float = 1.0,
                 old: list[float] | None = None, ref: list[float] | None = None) -> tuple[float, torch.Tensor]:
    """Loss and d loss / d logπ_θ per token, with logπ_old = `old` (default 0) and logπ_θ = old + log_ratio."""
    old_t = torch.tensor(old if old is not None else [0.0] * len(log_ratios))
    logps = (old_t + torch.tensor(log_ratios)).requires_grad_(True)
    ref_t = torch.tensor(ref) if ref is not None else None
    parts = grpo_loss(logps, old_t, batch, cfg, normaliser, ref_t)
    parts.loss.backward()
    return float(parts.loss.detach()), logps.grad


NO_IS = GRPOSettings(vllm_importance_sampling_correction=False)


# --- advantages --------------------------------------------------------------------------------
def test_advantages_centre_and_scale_by_group_std():
    (adv,) = group_advantages([[1.0, 0.0, 0.0, 1.0]], "group")
    # mean 0.5; unbiased std = sqrt(4 · 0.25 / 3) = 0.57735
    a = 0.5 / (0.57735027 + 1e-4)
    assert adv == pytest.approx([a, -a, -a, a], rel=1e-6)
    assert adv[0] == pytest.approx(0.86588, abs=1e-4)


def test_dr_grpo_advantages_are_only_centred():
    (adv,) = group_advantages([[1.0, 0.0, 0.0, 1.0]], "none")
    assert adv == pytest.approx([0.5, -0.5, -0.5, 0.5])


def test_all_equal_group_is_dropped_and_others_kept():
    out = group_advantages([[0.3, 0.3, 0.3], [2.0, 1.0], [5.0]], "none")
    assert out[0] is None  # zero variance: nothing to learn
    assert out[1] == pytest.approx([0.5, -0.5])
    assert out[2] is None  # a single run is never a group


def test_batch_scaling_uses_the_std_of_all_rewards():
    # all rewards [1, 0, 3, 3]: mean 1.75, squared deviations sum 6.75, unbiased var 2.25 → std 1.5
    out = group_advantages([[1.0, 0.0], [3.0, 3.0]], "batch")
    assert out[0] == pytest.approx([0.5 / 1.5001, -0.5 / 1.5001], rel=1e-6)
    assert out[1] is None


# --- clipping at both epsilons -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("advantage", "ratio", "expected_grad"),
    [
        (+1.0, 1.50, 0.0),  # pushed up past 1 + ε_high: clipped, no gradient
        (+1.0, 1.25, -1.25),  # inside 1 + 0.28 (would be clipped at a symmetric 0.2): −A·ratio
        (+1.0, 0.50, -0.50),  # below 1 − ε with A > 0: the unclipped term is the min, gradient flows
        (-1.0, 0.50, 0.0),  # pushed down past 1 − ε: clipped, no gradient
        (-1.0, 0.85, 0.85),  # inside the low bound: −A·ratio
        (-1.0, 1.50, 1.50),  # above 1 + ε_high with A < 0: unclipped, gradient flows (pessimistic bound)
    ],
)
def test_clip_region(advantage, ratio, expected_grad):
    _, grad = grad_of_loss([math.log(ratio)], flat_batch([1], [advantage]), NO_IS)
    assert float(grad[0]) == pytest.approx(expected_grad, abs=1e-6)


def test_loss_value_at_ratio_one_is_minus_advantage():
    loss, _ = grad_of_loss([0.0, 0.0], flat_batch([2], [0.7]), NO_IS, normaliser=2.0)
    assert loss == pytest.approx(-0.7)


# --- aggregation: token-mean vs sequence-mean vs Dr. GRPO -----------------------------------------
def test_token_mean_weights_every_token_equally():
    batch = flat_batch([1, 3], [1.0, -1.0])
    cfg = GRPOSettings(vllm_importance_sampling_correction=False, loss_type="token")
    assert cfg.loss_type == "dapo"
    norm = loss_normaliser(cfg, n_tokens=4, n_seqs=2)
    loss, grad = grad_of_loss([0.0] * 4, batch, cfg, norm)
    assert loss == pytest.approx((-1 + 3) / 4)
    assert grad.tolist() == pytest.approx([-0.25, 0.25, 0.25, 0.25])


def test_sequence_mean_weights_every_sequence_equally():
    batch = flat_batch([1, 3], [1.0, -1.0])
    cfg = GRPOSettings(vllm_importance_sampling_correction=False, loss_type="sequence")
    assert cfg.loss_type == "grpo"
    loss, grad = grad_of_loss([0.0] * 4, batch, cfg, loss_normaliser(cfg, 4, 2))
    assert loss == pytest.approx((-1 + 1) / 2)
    assert grad.tolist() == pytest.approx([-0.5, 1 / 6, 1 / 6, 1 / 6])


def test_dr_grpo_divides_by_a_constant_length():
    batch = flat_batch([1, 3], [1.0, -1.0])
    cfg = GRPOSettings(vllm_importance_sampling_correction=False, loss_type="dr_grpo", max_completion_length=4)
    loss, grad = grad_of_loss([0.0] * 4, batch, cfg, loss_normaliser(cfg, 4, 2))
    assert loss == pytest.approx(2 / 8)
    assert grad.tolist() == pytest.approx([-1 / 8, 1 / 8, 1 / 8, 1 / 8])


def test_role_weight_scales_and_zero_weight_silences_a_sequence():
    batch = flat_batch([1, 1], [1.0, 1.0], weights=[0.5, 0.0])
    _, grad = grad_of_loss([0.0, 0.0], batch, NO_IS)
    assert grad.tolist() == [-0.5, 0.0]


# --- GSPO: one ratio per sequence ---------------------------------------------------------------
def test_sequence_level_ratio_uses_the_mean_log_ratio():
    cfg = GRPOSettings(vllm_importance_sampling_correction=False, importance_sampling_level="sequence")
    # log-ratios 0.1 and 0.3 → one ratio s = e^0.2 = 1.2214 (inside the clip) for both tokens.
    # loss = −2·s·A (two tokens, normaliser 1); ds/dlogπ_t = s/2, so each token's gradient is −s.
    _, grad = grad_of_loss([0.1, 0.3], flat_batch([2], [1.0]), cfg)
    assert grad.tolist() == pytest.approx([-math.exp(0.2)] * 2, rel=1e-5)
    # log-ratios 0.2 and 0.4 → e^0.3 = 1.35 > 1.28: the whole sequence is clipped, though token 1 alone is not
    _, grad = grad_of_loss([0.2, 0.4], flat_batch([2], [1.0]), cfg)
    assert grad.tolist() == [0.0, 0.0]


# --- truncated importance sampling against the logged sampler logprobs ----------------------------------
@pytest.mark.parametrize(
    ("mode", "old_minus_sampling", "expected_weight"),
    [
        ("token_truncate", math.log(0.5), 0.5),  # π_old/μ = 0.5: kept as is
        ("token_truncate", math.log(3.0), 2.0),  # 3 truncated to the cap C = 2
        ("token_mask", math.log(3.0), 0.0),  # above the cap: masked out
        ("token_mask", math.log(1.5), 1.5),
    ],
)
def test_importance_weight_per_token(mode, old_minus_sampling, expected_weight):
    cfg = GRPOSettings(vllm_importance_sampling_mode=mode, vllm_importance_sampling_clip_max=2.0)
    old = [-1.0]
    batch = flat_batch([1], [1.0], sampling_logps=[old[0] - old_minus_sampling])
    _, grad = grad_of_loss([0.0], batch, cfg, old=old)  # ratio 1: gradient = −A · w
    assert float(grad[0]) == pytest.approx(-expected_weight, rel=1e-5)


def test_importance_weight_per_sequence_is_the_product_of_token_ratios():
    cfg = GRPOSettings(vllm_importance_sampling_mode="sequence_truncate", vllm_importance_sampling_clip_max=2.0)
    old = [-1.0, -2.0]
    batch = flat_batch([2], [1.0], sampling_logps=[o - math.log(1.5) for o in old])
    _, grad = grad_of_loss([0.0, 0.0], batch, cfg, old=old)  # 1.5 · 1.5 = 2.25 → truncated to 2
    assert grad.tolist() == pytest.approx([-2.0, -2.0], rel=1e-5)
    cfg = GRPOSettings(vllm_importance_sampling_mode="sequence_truncate", vllm_importance_sampling_clip_max=3.0)
    _, grad = grad_of_loss([0.0, 0.0], batch, cfg, old=old)
    assert grad.tolist() == pytest.approx([-2.25, -2.25], rel=1e-5)


# --- KL to the reference ------------------------------------------------------------------------------
def test_k3_kl_term_and_its_gradient():
    cfg = GRPOSettings(vllm_importance_sampling_correction=False, beta=0.1)
    logp, ref = math.log(0.5), math.log(0.25)
    # zero advantage: only the KL term remains. k3 = e^d − d − 1 with d = ref − logπ = ln 0.5
    d = ref - logp
    loss, grad = grad_of_loss([0.0], flat_batch([1], [0.0]), cfg, old=[logp], ref=[ref])
    assert loss == pytest.approx(0.1 * (math.exp(d) - d - 1))
    # d k3 / d logπ = −e^d + 1 = 0.5
    assert float(grad[0]) == pytest.approx(0.1 * (1 - math.exp(d)), rel=1e-5)
    loss, grad = grad_of_loss([0.0], flat_batch([1], [0.0]), cfg, old=[logp], ref=[logp])
    assert loss == 0.0 and float(grad[0]) == 0.0
