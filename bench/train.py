"""Update throughput: our GRPO update vs TRL's GRPOTrainer, same model, same fixed samples, same settings.

    .venv/bin/python bench/train.py [--samples 16] [--seed 0] [--trl-batch 1 4]

Samples are shaped like the agent's LLM calls in a real trace (prompt 150–750 tokens from corpus text,
completion 20–300 tokens; measured on rollouts of the 135M model: mean 242 + 100). Both sides do one
optimiser step over all samples (dapo token-mean loss, ε 0.2/0.28, β 0, LoRA r16 on all projections, fp32),
once to warm up and once timed; gradient checkpointing off on both (TRL's default is on:
`--trl-default-checkpointing` adds that run). TRL's generation is replaced by the fixed samples (its
`_generate_and_score_completions` returns them), so only the update is measured. Each side runs in its own
process so peak RSS is its own. Prints a table; tokens/s = (prompt + completion tokens) / update seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LR, EPS, EPS_HIGH, LORA_R, LORA_ALPHA = 1e-5, 0.2, 0.28, 16, 32
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
CORPUS = Path("/work/shared/data/pool/corpus.jsonl")


def model_dir() -> Path:
    from deepresearch.agent.model.factory import embedded_model_dir

    cache = os.environ.get("DEEPRESEARCH_CACHE_DIR") or Path.home() / ".cache" / "deepresearch"
    return embedded_model_dir(Path(cache))


def make_samples(n: int, seed: int, path: Path) -> None:
    """Fixed samples: prompts are real corpus text (tokenised once here), completions random tokens."""
    from deepresearch.train.update.export import write_samples
    from deepresearch.train.update.samples import TrainingSample
    from transformers import AutoTokenizer

    rng = random.Random(seed)
    tok = AutoTokenizer.from_pretrained(str(model_dir()))
    texts = [json.loads(line)["text"] for _, line in zip(range(400), CORPUS.open(), strict=False)] if CORPUS.is_file() \
        else ["The quick brown fox jumps over the lazy dog. " * 40]
    pool = tok(" ".join(texts), add_special_tokens=False)["input_ids"]
    samples = []
    for i in range(n):
        n_prompt, n_completion = rng.randint(150, 750), rng.randint(20, 300)
        start = rng.randrange(0, len(pool) - n_prompt)
        samples.append(TrainingSample(
            sample_id=f"s{i}", run_id=f"run{i}", group_id=f"g{i // 2}", role="executor",
            prompt_ids=pool[start:start + n_prompt],
            completion_ids=[rng.randrange(100, tok.vocab_size) for _ in range(n_completion)],
            sampling_logprobs=[-1.0] * n_completion, advantage=1.0 if i % 2 == 0 else -1.0,
        ))
    write_samples(samples, path)


def run_ours(samples_path: Path) -> dict:
    import torch
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.update.export import read_samples
    from deepresearch.train.update.updater import GRPOUpdater

    samples = read_samples(samples_path)
    cfg = TrainSettings()
    cfg.lora.r, cfg.lora.lora_alpha, cfg.lora.target_modules = LORA_R, LORA_ALPHA, TARGETS
    cfg.grpo = cfg.grpo.model_copy(update={
        "learning_rate": LR, "epsilon": EPS, "epsilon_high": EPS_HIGH, "beta": 0.0, "loss_type": "dapo",
        "vllm_importance_sampling_correction": False, "skip_forced_tokens": False,
        "per_device_train_batch_size": 1, "gradient_accumulation_steps": 0,
    })
    updater = GRPOUpdater(model_dir(), cfg)
    updater.train_round(samples)  # warm-up step
    stats = updater.train_round(samples)
    return {"seconds": stats.seconds, "tokens": stats.processed_tokens, "threads": torch.get_num_threads()}


def run_trl(samples_path: Path, batch: int, checkpointing: bool) -> dict:
    import torch
    from datasets import Dataset
    from deepresearch.train.update.export import read_samples
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    samples = read_samples(samples_path)
    n = len(samples)
    if n % batch:
        raise SystemExit(f"--samples {n} must be a multiple of the TRL batch {batch}")
    tok = AutoTokenizer.from_pretrained(str(model_dir()))
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id

    def fixed_batch(rows: list[dict]) -> dict:
        """TRL's generation output for these rows: left-padded prompts, right-padded completions."""
        picked = [samples[r["idx"]] for r in rows]
        p_len = max(len(s.prompt_ids) for s in picked)
        c_len = max(len(s.completion_ids) for s in picked)
        prompt_ids = torch.full((len(picked), p_len), pad)
        prompt_mask = torch.zeros((len(picked), p_len), dtype=torch.long)
        completion_ids = torch.full((len(picked), c_len), pad)
        completion_mask = torch.zeros((len(picked), c_len), dtype=torch.long)
        for i, s in enumerate(picked):
            prompt_ids[i, p_len - len(s.prompt_ids):] = torch.tensor(s.prompt_ids)
            prompt_mask[i, p_len - len(s.prompt_ids):] = 1
            completion_ids[i, : len(s.completion_ids)] = torch.tensor(s.completion_ids)
            completion_mask[i, : len(s.completion_ids)] = 1
        return {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
                "completion_mask": completion_mask,
                "advantages": torch.tensor([s.advantage for s in picked], dtype=torch.float32),
                "num_items_in_batch": completion_mask.sum()}

    class FixedSamplesGRPO(GRPOTrainer):
        def _generate_and_score_completions(self, inputs):  # the update only: no generation, no rewards
            return fixed_batch(inputs)

    class StepTimer(TrainerCallback):
        def __init__(self):
            self.times: list[float] = []

        def on_step_begin(self, args, state, control, **kw):
            self._t = time.perf_counter()

        def on_step_end(self, args, state, control, **kw):
            self.times.append(time.perf_counter() - self._t)

    steps = n // batch
    args = GRPOConfig(
        output_dir=tempfile.mkdtemp(prefix="trl-bench-"), per_device_train_batch_size=batch,
        gradient_accumulation_steps=steps, steps_per_generation=steps, num_generations=2, max_steps=2,
        learning_rate=LR, beta=0.0, epsilon=EPS, epsilon_high=EPS_HIGH, loss_type="dapo", scale_rewards="group",
        bf16=False, fp16=False, use_cpu=True, report_to=[], logging_steps=1, save_strategy="no",
        max_completion_length=300, shuffle_dataset=False, seed=0, lr_scheduler_type="constant",
        warmup_steps=0, dataloader_num_workers=0, gradient_checkpointing=checkpointing,
    )
    model = AutoModelForCausalLM.from_pretrained(str(model_dir()), dtype=torch.float32)
    timer = StepTimer()
    trainer = FixedSamplesGRPO(
        model=model, reward_funcs=[lambda completions, **kw: [0.0] * len(completions)], args=args,
        train_dataset=Dataset.from_list([{"prompt": "x", "idx": i} for i in range(n)] * 4), processing_class=tok,
        peft_config=LoraConfig(r=LORA_R, lora_alpha=LORA_ALPHA, target_modules=TARGETS, task_type="CAUSAL_LM"),
        callbacks=[timer],
    )
    trainer.train()
    return {"seconds": timer.times[-1], "tokens": sum(s.n_tokens for s in samples),
            "threads": torch.get_num_threads()}


def child(args: argparse.Namespace) -> None:
    result = (run_ours(args.samples_file) if args.impl == "ours"
              else run_trl(args.samples_file, args.batch, args.checkpointing))
    result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps(result), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trl-batch", type=int, nargs="+", default=[1, 4], help="TRL micro-batch sizes to try")
    parser.add_argument("--trl-default-checkpointing", action="store_true",
                        help="also run TRL with its default gradient_checkpointing=True (batch 1)")
    parser.add_argument("--impl", choices=["ours", "trl"], help=argparse.SUPPRESS)
    parser.add_argument("--samples-file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--checkpointing", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.impl:
        child(args)
        return

    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        path = Path(tmp) / "samples.parquet"
        make_samples(args.samples, args.seed, path)
        runs = [("ours (micro-batch 1, no padding)", ["--impl", "ours"])]
        # TRL defaults to gradient checkpointing; ours does not: compare like with like (off), and optionally
        # TRL's default as well.
        runs += [(f"TRL GRPOTrainer (batch {b})", ["--impl", "trl", "--batch", str(b)]) for b in args.trl_batch]
        if args.trl_default_checkpointing:
            runs.append(("TRL (batch 1, grad. checkpointing)", ["--impl", "trl", "--batch", "1", "--checkpointing"]))
        rows = []
        for label, extra in runs:
            cmd = [sys.executable, __file__, "--samples-file", str(path), *extra]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
            if line is None:
                print(f"{label}: failed\n{proc.stderr[-2000:]}", file=sys.stderr)
                continue
            r = json.loads(line[len("RESULT "):])
            rows.append((label, r))
    if not rows:
        raise SystemExit("no run finished")
    ours = rows[0][1]["tokens"] / rows[0][1]["seconds"] if rows[0][0].startswith("ours") else None
    print(f"\nGRPO update, {args.samples} samples, SmolLM2-135M fp32, LoRA r{LORA_R}, 1 optimiser step (timed "
          f"after a warm-up step), load average {os.getloadavg()[0]:.1f}")
    print(f"{'implementation':<36} {'tokens':>7} {'seconds':>8} {'tokens/s':>9} {'vs ours':>8} {'peak RSS MiB':>13}")
    for label, r in rows:
        tps = r["tokens"] / r["seconds"]
        ratio = f"{ours / tps:.2f}x" if ours and not label.startswith("ours") else "-"
        print(f"{label:<36} {r['tokens']:>7} {r['seconds']:>8.1f} {tps:>9.1f} {ratio:>8} {r['peak_rss_mib']:>13.0f}")


if __name__ == "__main__":
    main()
