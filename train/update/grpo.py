"""The GRPO objective, readable in one sitting.

Notation (one optimiser step covers a batch of sequences; each sequence is one LLM call of one run):

    r_i            reward of run i;  group = the G runs of one question
    A_i            advantage of run i = r_i − mean_group(r)            (÷ std_group(r) unless Dr. GRPO)
                   Stratified GRPO (stratify="searches"): the same within the stratum S(i) of the group's
                   runs with run i's number of searches: A_i = (r_i − mean_S(r)) ÷ std_S(r); a stratum of
                   one run or with equal rewards gives A_i = 0 (nothing to compare it with)
    π_θ(y_t)       probability of generated token y_t under the policy being trained (LoRA on)
    π_old(y_t)     the same policy before this round's first optimiser step (no gradient)
    μ(y_t)         the sampler's probability, logged in the trace when the token was generated
    π_ref(y_t)     the base model: the same network with the adapter disabled

    ratio_t  = π_θ / π_old                                   (GSPO: exp(mean_t log ratio_t), one per sequence)
    loss_t   = −min(ratio_t · A,  clip(ratio_t, 1 − ε_low, 1 + ε_high) · A)
    loss_t  *= w_t = min(π_old / μ, C)                        truncated importance sampling (TIS) for the
                                                              sampler ≠ trainer mismatch (engines, grammar masks)
    loss_t  += β · (π_ref/π_θ − log(π_ref/π_θ) − 1)           k3 estimator of KL(π_θ ‖ π_ref)

Only completion tokens — tokens the model itself generated — carry a loss. Prompt tokens (system
prompts, questions, tool outputs) are never selected, so their gradient is exactly zero.

The per-token quantities live in flat 1-D tensors over all completion tokens of a micro-batch, with
`seq_idx` saying which sequence each token belongs to: no padded [B, T] loss matrix, no mask multiply.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import torch

from ..config import GRPOSettings

STD_EPS = 1e-4  # TRL's constant; keeps a tiny-but-nonzero std from exploding the advantages


# ---------------------------------------------------------------------------------------------
# 1. Group-relative advantages
# ---------------------------------------------------------------------------------------------
def group_advantages(
    groups: Sequence[Sequence[float]], scale_rewards: str = "group",
    strata: Sequence[Sequence[Hashable]] | None = None,
) -> list[list[float] | None]:
    """A_i = r_i − mean(group), optionally ÷ std. A group whose rewards are all equal teaches nothing
    (every advantage would be 0) and is dropped: its entry is None.

    scale_rewards: "group" ÷ the group's std, "batch" ÷ the std of all rewards, "none" (Dr. GRPO).
    strata: per group, a key per run (e.g. its number of searches); the mean and the "group" std are then
    taken within each stratum, so runs are compared only with runs of the same shape. A run alone in its
    stratum, or in one with equal rewards, gets 0 rather than a comparison with differently shaped runs
    (the Stratified GRPO paper's choice); a group where every run gets 0 is dropped like an equal group.
    """
    tensors = [torch.tensor(list(g), dtype=torch.float64) for g in groups]
    batch_std = torch.cat(tensors).std() if scale_rewards == "batch" and len(tensors) else None
    out: list[list[float] | None] = []
    for g, rewards in enumerate(tensors):
        if rewards.numel() < 2 or torch.allclose(rewards, rewards[0].expand_as(rewards)):
            out.append(None)
            continue
        keys = list(strata[g]) if strata is not None else [0] * rewards.numel()
        advantages = torch.zeros_like(rewards)
        for key in dict.fromkeys(keys):
            idx = torch.tensor([i for i, k in enumerate(keys) if k == key])
            r = rewards[idx]
            if r.numel() < 2 or torch.allclose(r, r[0].expand_as(r)):
                continue  # stays 0
            a = r - r.mean()
            if scale_rewards == "group":
                a = a / (r.std() + STD_EPS)  # unbiased std, as TRL
            elif scale_rewards == "batch":
                a = a / (batch_std + STD_EPS)
            advantages[idx] = a
        out.append(advantages.tolist() if bool(advantages.any()) else None)
    return out


# ---------------------------------------------------------------------------------------------
# 2. Per-token log-probabilities of the completion tokens
# ---------------------------------------------------------------------------------------------
@dataclass
class TokenBatch:
    """A micro-batch of (prompt + completion) sequences, right-padded, plus the flat completion tokens.

    For the completion token at position t of row b, the logits that predict it sit at position t − 1.
    """

    input_ids: torch.Tensor  # [B, T]
    attention_mask: torch.Tensor  # [B, T]
    token_rows: torch.Tensor  # [N] row of each completion token (== seq_idx)
    token_pred_pos: torch.Tensor  # [N] position whose logits predict the token (t − 1)
    token_ids: torch.Tensor  # [N] the completion tokens themselves
    sampling_logps: torch.Tensor  # [N] log μ(y_t) from the trace
    advantages: torch.Tensor  # [B] one per sequence (the run's advantage)
    weights: torch.Tensor  # [B] per-sequence loss weight (role weight; 0 for padding samples)
    # [N, ceil(V/32)] int32: the tokens the grammar allowed at each completion token (grammar_masks.py);
    # None = the whole vocabulary everywhere.
    allowed: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> TokenBatch:
        return TokenBatch(**{k: None if v is None else v.to(device) for k, v in self.__dict__.items()})

    @property
    def n_seqs(self) -> int:
        return int(self.input_ids.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.token_ids.numel())


def completion_logps(model: torch.nn.Module, batch: TokenBatch, temperature: float = 1.0) -> torch.Tensor:
    """log π(y_t) for every completion token, shape [N].

    The decoder runs over the whole sequence, but the vocabulary projection (the most expensive
    matmul for a small model) only runs on the N positions that predict completion tokens. Logits are
    divided by the sampling temperature and, with `batch.allowed`, restricted to the tokens the grammar
    allowed, so the result is the distribution the sampler drew from and logged (log μ):

        log π(y_t) = z_t(y_t) − log Σ_{v allowed at t} exp z_t(v),     z_t = logits_t / T
    """
    decoder = model.get_decoder()
    head = model.get_output_embeddings()
    hidden = decoder(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
    h = hidden[batch.token_rows, batch.token_pred_pos]  # [N, H]
    logits = head(h).float() / temperature  # [N, V]
    if batch.allowed is not None:
        from .grammar_masks import unpack_bits

        logits = logits.masked_fill(~unpack_bits(batch.allowed, logits.shape[-1]), float("-inf"))
    picked = logits.gather(-1, batch.token_ids.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


# ---------------------------------------------------------------------------------------------
# 3. The clipped objective
# ---------------------------------------------------------------------------------------------
def per_sequence_mean(x: torch.Tensor, seq_idx: torch.Tensor, n_seqs: int) -> torch.Tensor:
    """Mean of a flat per-token tensor within each sequence, shape [n_seqs] (0 for empty sequences)."""
    sums = torch.zeros(n_seqs, dtype=x.dtype, device=x.device).index_add(0, seq_idx, x)
    counts = torch.zeros(n_seqs, dtype=x.dtype, device=x.device).index_add(0, seq_idx, torch.ones_like(x))
    return sums / counts.clamp(min=1.0)


def loss_normaliser(cfg: GRPOSettings, n_tokens: int, n_seqs: int) -> float:
    """The denominator of one optimiser step's loss, counted over the WHOLE step (every micro-batch of
    every process), so that accumulation and data parallelism give the same gradient as one big batch."""
    if cfg.loss_type == "dapo":  # token-mean
        return float(max(n_tokens, 1))
    if cfg.loss_type == "grpo":  # sequence-mean of token-means
        return float(max(n_seqs, 1))
    return float(max(n_seqs, 1) * cfg.max_completion_length)  # dr_grpo: constant length, no length bias


@dataclass
class LossParts:
    loss: torch.Tensor  # scalar: this micro-batch's share of the step loss
    stats: dict[str, float]


def importance_weights(old_logps: torch.Tensor, sampling_logps: torch.Tensor, seq_idx: torch.Tensor,
                       n_seqs: int, cfg: GRPOSettings) -> torch.Tensor:
    """w = π_old / μ, truncated (min(w, C)) or masked (w if w ≤ C else 0), per token or per sequence.
    No gradient flows through it."""
    log_w = (old_logps - sampling_logps).detach()
    if cfg.vllm_importance_sampling_mode.startswith("sequence"):
        # one weight per sequence: the product of its token ratios, Π_t w_t
        seq_log_w = torch.zeros(n_seqs, dtype=log_w.dtype, device=log_w.device).index_add(0, seq_idx, log_w)
        log_w = seq_log_w[seq_idx]
    w = log_w.exp()
    cap = cfg.vllm_importance_sampling_clip_max
    if cfg.vllm_importance_sampling_mode.endswith("truncate"):
        return w.clamp(max=cap)
    return torch.where(w <= cap, w, torch.zeros_like(w))


def grpo_loss(
    logps: torch.Tensor,
    old_logps: torch.Tensor,
    batch: TokenBatch,
    cfg: GRPOSettings,
    normaliser: float,
    ref_logps: torch.Tensor | None = None,
) -> LossParts:
    """The micro-batch's contribution to the step loss: Σ (per-token loss) / normaliser.

    logps carries the gradient; old_logps (π_old) and ref_logps (π_ref) must not.
    """
    seq_idx, n_seqs = batch.token_rows, batch.n_seqs
    advantage = batch.advantages[seq_idx]  # every token of a sequence shares its run's advantage

    # ratio_t = π_θ / π_old (token level), or GSPO's one ratio per sequence from the mean log-ratio
    log_ratio = logps - old_logps
    if cfg.importance_sampling_level == "sequence":
        log_ratio = per_sequence_mean(log_ratio, seq_idx, n_seqs)[seq_idx]
    ratio = log_ratio.exp()

    # PPO clip with asymmetric bounds: once the ratio leaves [1 − ε_low, 1 + ε_high] in the direction
    # the advantage pushes it, the min picks the clipped (constant) term and the gradient is zero.
    clipped_ratio = ratio.clamp(1.0 - cfg.epsilon, 1.0 + cfg.epsilon_high)
    per_token = -torch.min(ratio * advantage, clipped_ratio * advantage)

    if cfg.vllm_importance_sampling_correction:
        is_w = importance_weights(old_logps, batch.sampling_logps, seq_idx, n_seqs, cfg)
        per_token = per_token * is_w
    else:
        is_w = torch.ones_like(logps)

    kl = torch.zeros_like(logps)
    if cfg.beta > 0.0 and ref_logps is not None:
        delta = ref_logps - logps
        kl = delta.exp() - delta - 1.0  # ≥ 0, unbiased estimate of KL(π_θ ‖ π_ref) under π_θ samples
        per_token = per_token + cfg.beta * kl

    per_token = per_token * batch.weights[seq_idx]

    # grpo: each sequence counts once, whatever its length; dapo / dr_grpo: every token counts once
    by_sequence = cfg.loss_type == "grpo"
    total = per_sequence_mean(per_token, seq_idx, n_seqs).sum() if by_sequence else per_token.sum()
    loss = total / normaliser

    with torch.no_grad():
        pushes_up = advantage > 0
        clipped_high = (ratio > 1.0 + cfg.epsilon_high) & pushes_up
        clipped_low = (ratio < 1.0 - cfg.epsilon) & ~pushes_up
        n = max(logps.numel(), 1)
        stats = {
            "tokens": float(logps.numel()),
            "clip_high_frac": float(clipped_high.sum()) / n,
            "clip_low_frac": float(clipped_low.sum()) / n,
            "ratio_mean": float(ratio.mean()) if logps.numel() else 1.0,
            "is_weight_mean": float(is_w.mean()) if logps.numel() else 1.0,
            "kl_mean": float(kl.mean()) if logps.numel() else 0.0,
            "sampler_logp_gap": float((old_logps - batch.sampling_logps).abs().mean()) if logps.numel() else 0.0,
        }
    return LossParts(loss=loss, stats=stats)
