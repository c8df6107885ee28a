"""A tiny randomly initialised Llama saved to disk: the real transformers + peft code path in milliseconds."""

from __future__ import annotations

import random
from pathlib import Path

from deepresearch.train.update.samples import TrainingSample

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


def save_tiny_chat_model(cache_dir: Path, tokenizer_dir: Path, seed: int = 0) -> Path:
    """A tiny random Llama with the real SmolLM2 tokenizer and chat template, placed where the app looks for
    its embedded model (`cache_dir/models/<name>`): every app path (engine, grammar, trace, trainer) runs for
    real, a research run takes seconds, and what it answers is noise. For tests of mechanics, not quality."""
    import shutil

    import torch
    from deepresearch.agent.model.embedded.loaders.packaged_model import COMPLETE_MARKER, converted_dir
    from transformers import LlamaConfig, LlamaForCausalLM

    target = converted_dir(cache_dir)
    target.mkdir(parents=True, exist_ok=True)
    for name in ("chat_template.jinja", "generation_config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy2(tokenizer_dir / name, target / name)
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=49152, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, max_position_embeddings=8192, bos_token_id=1, eos_token_id=2,
        pad_token_id=2, tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(target)
    (target / COMPLETE_MARKER).write_text("tiny random model for tests\n")
    return target
