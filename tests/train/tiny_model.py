"""A tiny randomly initialised Llama saved to disk: the real transformers + peft code path in milliseconds."""

from __future__ import annotations

import random
from pathlib import Path

from deepresearch.train.samples import TrainingSample

VOCAB = 96


def save_tiny_llama(path: Path, seed: int = 0) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, pad_token_id=0, eos_token_id=1, bos_token_id=2,
    )
    LlamaForCausalLM(config).save_pretrained(path)
    return path


def random_samples(
    n_groups: int = 3, group_size: int = 2, calls_per_run: int = 2, seed: int = 0
) -> list[TrainingSample]:
    """Samples shaped like a trace: several calls per run, varied prompt/completion lengths."""
    rng = random.Random(seed)
    out = []
    for g in range(n_groups):
        advantages = [rng.choice([-1.0, 1.0]) * rng.uniform(0.3, 1.2) for _ in range(group_size)]
        for r, adv in enumerate(advantages):
            for c in range(calls_per_run):
                n_prompt, n_completion = rng.randint(5, 40), rng.randint(1, 12)
                out.append(TrainingSample(
                    sample_id=f"g{g}r{r}:{c}", run_id=f"g{g}r{r}", group_id=f"g{g}",
                    role=rng.choice(["planner", "executor", "writer"]),
                    prompt_ids=[rng.randrange(3, VOCAB) for _ in range(n_prompt)],
                    completion_ids=[rng.randrange(3, VOCAB) for _ in range(n_completion)],
                    sampling_logprobs=[-rng.uniform(3.0, 6.0) for _ in range(n_completion)],
                    advantage=adv,
                ))
    return out
