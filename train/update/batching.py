"""From a round's samples to tensors: optimiser steps → per-process shards → micro-batches → TokenBatch.

Every process computes the same global plan from the same sample list (no communication needed),
then takes its own share. Each process runs the same number of micro-batches per step (FSDP and DDP
need matching forward/backward calls); a process short of samples runs zero-weight copies, which cost a
forward pass and contribute exactly nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from ..config import GRPOSettings
from .device import micro_batch_size
from .grammar_masks import ALL_ALLOWED, GrammarMasks, words_for
from .grpo import TokenBatch
from .samples import TrainingSample

FORCED_LOGPROB = -1e-4  # logged log μ above this: p ≥ 0.9999, the grammar left no real choice


@dataclass
class StepPlan:
    """One optimiser step: the global token/sequence counts and this process's micro-batches."""

    n_tokens: int  # completion tokens of the real samples of the step, over all processes
    n_seqs: int
    micro_batches: list[list[TrainingSample]]


def trainable(samples: list[TrainingSample], cfg: GRPOSettings) -> list[TrainingSample]:
    """Samples that take part in the update: weight > 0, and not cut off when truncation is masked."""
    return [s for s in samples if s.weight > 0 and not (cfg.mask_truncated_completions and s.truncated)]


def optimiser_steps(samples: list[TrainingSample], cfg: GRPOSettings, world_size: int) -> list[list[TrainingSample]]:
    """Shuffle (seeded) and cut into optimiser steps. gradient_accumulation_steps == 0 means one step
    for the whole round: every sample is then trained on by the policy that generated it (on-policy)."""
    order = list(samples)
    random.Random(cfg.seed).shuffle(order)
    if cfg.gradient_accumulation_steps == 0:
        return [order] if order else []
    per_step = micro_batch_size(cfg) * cfg.gradient_accumulation_steps * world_size
    return [order[i : i + per_step] for i in range(0, len(order), per_step)]


def shard(samples: list[TrainingSample], world_size: int) -> list[list[TrainingSample]]:
    """Split a step's samples over processes, balancing tokens (longest first to the lightest shard)."""
    shards: list[list[TrainingSample]] = [[] for _ in range(world_size)]
    loads = [0] * world_size
    for s in sorted(samples, key=lambda s: (-s.n_tokens, s.sample_id)):
        k = loads.index(min(loads))
        shards[k].append(s)
        loads[k] += s.n_tokens
    return shards


def micro_batches(samples: list[TrainingSample], max_seqs: int, max_tokens: int) -> list[list[TrainingSample]]:
    """Sort by length (little padding), then fill micro-batches up to max_seqs sequences and max_tokens
    padded tokens (rows × longest row)."""
    out: list[list[TrainingSample]] = []
    current: list[TrainingSample] = []
    longest = 0
    for s in sorted(samples, key=lambda s: (s.n_tokens, s.sample_id)):
        padded_if_added = max(longest, s.n_tokens) * (len(current) + 1)
        if current and (len(current) >= max_seqs or padded_if_added > max_tokens):
            out.append(current)
            current, longest = [], 0
        current.append(s)
        longest = max(longest, s.n_tokens)
    if current:
        out.append(current)
    return out


def plan_step(step_samples: list[TrainingSample], cfg: GRPOSettings, rank: int, world_size: int) -> StepPlan:
    per_rank = [
        micro_batches(part, micro_batch_size(cfg), cfg.max_tokens_per_microbatch)
        for part in shard(step_samples, world_size)
    ]
    needed = max(len(mbs) for mbs in per_rank)
    mine = per_rank[rank]
    filler = min(step_samples, key=lambda s: (s.n_tokens, s.sample_id))
    while len(mine) < needed:  # same number of forward/backward calls on every process
        mine.append([filler.model_copy(update={"weight": 0.0, "sample_id": filler.sample_id + ":pad"})])
    return StepPlan(
        n_tokens=sum(len(loss_positions(s, cfg.skip_forced_tokens)) for s in step_samples),
        n_seqs=len(step_samples),
        micro_batches=mine,
    )


def loss_positions(sample: TrainingSample, skip_forced: bool) -> list[int]:
    """Indices of the completion tokens that carry a loss. Skipped as forced: those the engine marked
    (jump-forward appended them unsampled) and, for traces without the mark, those logged at p ≥ 0.9999."""
    if not skip_forced:
        return list(range(len(sample.completion_ids)))
    marked = set(sample.forced_positions)
    return [i for i, lp in enumerate(sample.sampling_logprobs) if lp < FORCED_LOGPROB and i not in marked]


def count_micro_batches(samples: list[TrainingSample], cfg: GRPOSettings, world_size: int = 1) -> int:
    """Micro-batches one process runs for a round (for progress bars)."""
    steps = optimiser_steps(trainable(samples, cfg), cfg, world_size)
    return cfg.num_iterations * sum(len(plan_step(step, cfg, 0, world_size).micro_batches) for step in steps)


def collate(samples: list[TrainingSample], pad_id: int = 0, skip_forced: bool = False,
            masks: GrammarMasks | None = None) -> TokenBatch:
    """Right-pad prompt+completion rows and list the loss-carrying completion tokens flat, row by row; with
    `masks`, also the tokens the grammar allowed at each of them."""
    width = max(s.n_tokens for s in samples)
    input_ids = torch.full((len(samples), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(samples), width), dtype=torch.long)
    rows, pred_pos, token_ids, sampling, allowed = [], [], [], [], []
    constrained = False
    for b, s in enumerate(samples):
        ids = s.prompt_ids + s.completion_ids
        input_ids[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention[b, : len(ids)] = 1
        start = len(s.prompt_ids)
        keep = loss_positions(s, skip_forced)
        rows += [b] * len(keep)
        pred_pos += [start - 1 + i for i in keep]  # the logits at t − 1 predict the token at t
        token_ids += [s.completion_ids[i] for i in keep]
        sampling += [s.sampling_logprobs[i] for i in keep]
        if masks is not None:
            packed = masks.packed(s)
            constrained |= packed is not None
            allowed.append(packed[keep] if packed is not None else
                           torch.full((len(keep), words_for(masks.vocab_size)), ALL_ALLOWED, dtype=torch.int32))
    return TokenBatch(
        input_ids=input_ids,
        attention_mask=attention,
        token_rows=torch.tensor(rows, dtype=torch.long),
        token_pred_pos=torch.tensor(pred_pos, dtype=torch.long),
        token_ids=torch.tensor(token_ids, dtype=torch.long),
        sampling_logps=torch.tensor(sampling, dtype=torch.float32),
        advantages=torch.tensor([s.advantage for s in samples], dtype=torch.float32),
        weights=torch.tensor([s.weight for s in samples], dtype=torch.float32),
        allowed=torch.cat(allowed) if constrained else None,
    )
