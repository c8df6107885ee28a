"""The update loop: one round of samples → optimiser steps on the LoRA adapter (torch + peft + accelerate).

Single process on a laptop CPU, DDP over gloo, or FSDP / DeepSpeed ZeRO under `accelerate launch` with
the configs in accelerate/ beside this file: the code is the same, only the Accelerator differs. Every process
builds the same global plan from the same samples (see batching.py); gradients are summed exactly
once per optimiser step, so N processes give the same adapter as one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from pydantic import BaseModel

from ..config import TrainSettings
from ..policy import load_policy
from .batching import StepPlan, collate, loss_positions, optimiser_steps, plan_step, trainable
from .device import DevicePlan, device_plan
from .grammar_masks import GrammarMasks
from .grpo import TokenBatch, completion_logps, grpo_loss, loss_normaliser
from .samples import TrainingSample

if TYPE_CHECKING:
    from ..choice.answer_choice import ChoiceExample

OPTIMIZER_STATE = "optimizer.pt"
CHOICE_OPTIMIZER_STATE = "choice_optimizer.pt"
CHOICE_BATCH = 4  # candidate sets per choice step, as `deepresearch train choices` measured it
RNG_STATE = "rng.pt"  # torch's CPU generator (LoRA dropout draws from it)
TRAINER_STATE = "trainer_state.json"  # written last by save_state: the updater state is complete


class UpdateStats(BaseModel):
    optimizer_steps: int = 0
    samples: int = 0
    completion_tokens: int = 0
    processed_tokens: int = 0  # prompt + completion tokens through forward+backward (no padding)
    loss: float = 0.0
    grad_norm: float = 0.0
    clip_high_frac: float = 0.0
    clip_low_frac: float = 0.0
    ratio_mean: float = 1.0
    is_weight_mean: float = 1.0
    kl_mean: float = 0.0
    sampler_logp_gap: float = 0.0
    seconds: float = 0.0
    peak_gpu_gib: float = 0.0  # this process's peak CUDA memory during the round (0 on CPUs)
    # The answer re-ranker's choice loss (choice/answer_choice.py) over the round's logged candidate sets.
    choice_examples: int = 0
    choice_steps: int = 0
    choice_loss: float = 0.0  # mean −log Σ_correct softmax s over the examples, as they were stepped on
    choice_note: str = ""

    @property
    def tokens_per_s(self) -> float:
        return self.processed_tokens / self.seconds if self.seconds > 0 else 0.0


class CompletionLogps(torch.nn.Module):
    """The policy behind one forward (batch → log π(y_t)) so DDP / FSDP hook a single root module."""

    def __init__(self, policy: torch.nn.Module):
        super().__init__()
        self.policy = policy

    def forward(self, batch: TokenBatch, temperature: float) -> torch.Tensor:
        return completion_logps(self.policy, batch, temperature)

    @property
    def _no_split_modules(self) -> list[str]:  # FSDP's auto-wrap reads the layer class from here
        return list(getattr(self.policy.get_base_model(), "_no_split_modules", None) or [])


class GRPOUpdater:
    def __init__(
        self,
        model_path: Path,
        settings: TrainSettings,
        init_adapter: Path | None = None,
        resume_from: Path | None = None,
        accelerator: Any = None,
        plan: DevicePlan | None = None,
    ):
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from accelerate import Accelerator
        from accelerate.utils import DistributedType

        self.settings = settings
        # fp32 on CPU always (bf16 is several times slower there); bf16 weights + autocast on one GPU.
        start_plan = plan or device_plan(settings.grpo)
        self.acc = accelerator or Accelerator(cpu=not start_plan.cuda, mixed_precision=start_plan.mixed_precision)
        sharded = self.acc.distributed_type in (DistributedType.FSDP, DistributedType.DEEPSPEED)
        self.plan = plan or device_plan(settings.grpo, sharded=sharded)
        self.cfg = self.plan.apply(settings.grpo)
        if self.acc.num_processes > 1 and "OMP_NUM_THREADS" not in os.environ:
            torch.set_num_threads(max(1, (os.cpu_count() or 1) // self.acc.num_processes))
        self.model_path = Path(model_path)
        start_adapter = resume_from if resume_from is not None else init_adapter
        policy = load_policy(self.model_path, settings.lora, start_adapter, self.cfg.seed, self.plan.dtype)
        if self.cfg.gradient_checkpointing:  # non-reentrant: works with frozen inputs (LoRA) as is
            policy.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.pad_id = int(policy.config.pad_token_id or policy.config.eos_token_id or 0)
        self.masks: GrammarMasks | None = None  # loaded with the first sample that carries a schema
        params = [p for p in policy.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(
            params, lr=self.cfg.learning_rate, betas=(self.cfg.adam_beta1, self.cfg.adam_beta2),
            weight_decay=self.cfg.weight_decay,
        )
        self.module, self.optimizer = self.acc.prepare(CompletionLogps(policy), optimizer)
        # The choice loss steps the same LoRA weights with its own AdamW: it wants a far larger step than the
        # token loss (3e-4 against 1e-5), and sharing one optimiser's moments would mix the two scales.
        self.choice_optimizer = torch.optim.AdamW(params, lr=self.cfg.answer_choice_lr, weight_decay=0.0)
        self._tokenizer: Any = None
        self.global_step = 0
        self.rounds = 0
        if resume_from is not None:
            self._load_trainer_state(Path(resume_from))

    # --- the policy as seen through the wrapper -------------------------------------------------
    @property
    def policy(self) -> torch.nn.Module:
        return self.acc.unwrap_model(self.module).policy

    def _collate(self, mb: list[TrainingSample]) -> TokenBatch:
        if self.masks is None and self.cfg.grammar_masked_logps and any(s.json_schema for s in mb):
            self.masks = GrammarMasks.for_model(self.model_path, int(self.policy.config.vocab_size))
        return collate(mb, self.pad_id, self.cfg.skip_forced_tokens, self.masks).to(self.acc.device)

    def _logps(self, batch: TokenBatch) -> torch.Tensor:
        return self.module(batch, self.cfg.temperature)

    @torch.no_grad()
    def _ref_logps(self, batch: TokenBatch) -> torch.Tensor:
        with self.policy.disable_adapter():  # π_ref = the base model: same weights, LoRA off
            return self._logps(batch)

    @torch.no_grad()
    def _old_logps(self, plans: list[StepPlan]) -> dict[str, torch.Tensor]:
        """π_old for every sample of this process, before the first optimiser step of the round."""
        old: dict[str, torch.Tensor] = {}
        for plan in plans:
            for mb in plan.micro_batches:
                logps = self._logps(self._collate(mb))
                sizes = [len(loss_positions(s, self.cfg.skip_forced_tokens)) for s in mb]
                for s, part in zip(mb, logps.split(sizes), strict=True):
                    old[s.sample_id] = part
        return old

    # --- one round --------------------------------------------------------------------------------
    def train_round(self, samples: list[TrainingSample], progress: Any = None,
                    choice: Sequence[ChoiceExample] = ()) -> UpdateStats:
        """Optimiser steps over one round's samples (`progress(done, total)` is called per micro-batch), then
        the answer re-ranker's choice steps over `choice`, the candidate sets the round's runs logged."""
        samples = trainable(samples, self.cfg)
        stats = UpdateStats(samples=len(samples), completion_tokens=sum(len(s.completion_ids) for s in samples))
        learnable = [ex for ex in choice if ex.learnable] if self.cfg.answer_choice_lr > 0 else []
        if not samples and not learnable:
            return stats
        self.module.train()
        if self.plan.cuda:
            torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        if samples:
            self._token_steps(samples, stats, progress)
        if learnable:
            self._choice_steps(learnable, stats)
        self.rounds += 1
        stats.seconds = time.perf_counter() - start
        if self.plan.cuda:
            stats.peak_gpu_gib = torch.cuda.max_memory_allocated() / 2**30
        return stats

    def _token_steps(self, samples: list[TrainingSample], stats: UpdateStats, progress: Any) -> None:
        """The GRPO loss over the round's token samples."""
        cfg, acc = self.cfg, self.acc
        steps = optimiser_steps(samples, cfg, acc.num_processes)
        plans = [plan_step(step, cfg, acc.process_index, acc.num_processes) for step in steps]
        # With a single optimiser step the policy is still π_old while computing the loss, so
        # π_old = π_θ.detach() and no extra forward is needed (TRL does the same).
        old = self._old_logps(plans) if len(plans) * cfg.num_iterations > 1 else None
        total_mbs = len(plans) * cfg.num_iterations * max(len(p.micro_batches) for p in plans)
        done, sums, n_mb = 0, dict.fromkeys(("clip_high_frac", "clip_low_frac", "ratio_mean", "is_weight_mean",
                                            "kl_mean", "sampler_logp_gap"), 0.0), 0
        for _ in range(cfg.num_iterations):
            for plan in plans:
                # DDP/FSDP average gradients over processes; scale back so the step sums them once.
                normaliser = loss_normaliser(cfg, plan.n_tokens, plan.n_seqs) / acc.num_processes
                step_loss = 0.0
                for i, mb in enumerate(plan.micro_batches):
                    batch = self._collate(mb)
                    last = i == len(plan.micro_batches) - 1
                    with nullcontext() if last else acc.no_sync(self.module):
                        logps = self._logps(batch)
                        old_logps = (torch.cat([old[s.sample_id] for s in mb]) if old is not None
                                     else logps.detach())
                        ref = self._ref_logps(batch) if cfg.beta > 0 else None
                        parts = grpo_loss(logps, old_logps, batch, cfg, normaliser, ref)
                        acc.backward(parts.loss)
                    step_loss += float(parts.loss.detach())
                    stats.processed_tokens += sum(s.n_tokens for s in mb if s.weight > 0)
                    for k in sums:
                        sums[k] += parts.stats[k]
                    n_mb += 1
                    done += 1
                    if progress is not None:
                        progress(done, total_mbs)
                grad_norm = acc.clip_grad_norm_(self.module.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                self.optimizer.zero_grad(set_to_none=True)
                self.global_step += 1
                stats.optimizer_steps += 1
                # each process's loss is scaled by the process count (see normaliser): the mean is the step loss
                stats.loss = float(acc.reduce(torch.tensor(step_loss, device=acc.device), "mean"))
                stats.grad_norm = float(grad_norm)
        stats.processed_tokens = int(acc.reduce(torch.tensor(stats.processed_tokens, device=acc.device), "sum"))
        for k, v in sums.items():
            setattr(stats, k, v / max(n_mb, 1))

    def _choice_steps(self, examples: list[ChoiceExample], stats: UpdateStats) -> None:
        """The exact choice loss −log Σ_correct softmax s (choice/answer_choice.py), CHOICE_BATCH sets a step. Every
        process steps on all of them (they are few), and the gradients are averaged so the replicas agree."""
        if self._sharded:  # the scorer calls the unwrapped model, which FSDP / ZeRO-3 shard
            stats.choice_note = "answer-choice loss skipped: not supported under FSDP / DeepSpeed"
            return
        from ..choice.answer_choice import ChoiceScorer, backward_choice

        if self._tokenizer is None:
            from transformers import AutoTokenizer

            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_path))
        scorer = ChoiceScorer(self.policy, self._tokenizer, self.pad_id, autocast=self.acc.autocast)
        params = [p for p in self.policy.parameters() if p.requires_grad]
        for group in self.choice_optimizer.param_groups:  # the setting now, not the one a checkpoint was saved with
            group["lr"] = self.cfg.answer_choice_lr
        total = 0.0
        for first in range(0, len(examples), CHOICE_BATCH):
            total += backward_choice(scorer, examples[first: first + CHOICE_BATCH])
            if self.acc.num_processes > 1:
                for p in params:
                    if p.grad is not None:
                        p.grad = self.acc.reduce(p.grad, "mean")
            torch.nn.utils.clip_grad_norm_(params, self.cfg.max_grad_norm)
            self.choice_optimizer.step()
            self.choice_optimizer.zero_grad(set_to_none=True)
            stats.choice_steps += 1
        stats.choice_examples, stats.choice_loss = len(examples), total / len(examples)

    # --- saving ---------------------------------------------------------------------------------
    def adapter_state_dict(self) -> dict[str, torch.Tensor]:
        """The trainable LoRA weights, gathered to full tensors (also under FSDP / ZeRO-3)."""
        full = self.acc.get_state_dict(self.module)
        return {k.removeprefix("policy."): v for k, v in full.items() if "lora_" in k}

    def save_adapter(self, path: Path, metadata: dict[str, Any]) -> None:
        """peft `save_pretrained` files + metadata.json, written by the main process."""
        state = self.adapter_state_dict()
        if self.acc.is_main_process:
            path = Path(path)
            path.mkdir(parents=True, exist_ok=True)
            self.policy.save_pretrained(str(path), state_dict=state)
            meta = {"step": self.global_step, "rounds": self.rounds, "base_model": str(self.model_path),
                    "grpo": self.cfg.model_dump(), "lora": self.settings.lora.model_dump(), **metadata}
            (path / "metadata.json").write_text(json.dumps(meta, indent=2, default=str))
        self.acc.wait_for_everyone()

    def save_state(self, path: Path) -> None:
        """Everything needed to resume: adapter, optimiser state, step counters, RNG."""
        path = Path(path)
        self.save_adapter(path, {"checkpoint": True})
        if self._sharded:
            self.acc.save_state(str(path / "accelerate"))
        elif self.acc.is_main_process:
            torch.save(self.optimizer.state_dict(), path / OPTIMIZER_STATE)
            torch.save(self.choice_optimizer.state_dict(), path / CHOICE_OPTIMIZER_STATE)
        if self.acc.is_main_process:
            torch.save(torch.get_rng_state(), path / RNG_STATE)
            (path / TRAINER_STATE).write_text(json.dumps({"global_step": self.global_step, "rounds": self.rounds}))
        self.acc.wait_for_everyone()

    def _load_trainer_state(self, path: Path) -> None:
        state_file = path / TRAINER_STATE
        if not state_file.is_file():
            raise FileNotFoundError(f"{path} is not a trainer checkpoint (no {TRAINER_STATE})")
        state = json.loads(state_file.read_text())
        self.global_step, self.rounds = int(state["global_step"]), int(state["rounds"])
        if self._sharded:
            self.acc.load_state(str(path / "accelerate"))
        elif (path / OPTIMIZER_STATE).is_file():
            self.optimizer.load_state_dict(torch.load(path / OPTIMIZER_STATE, weights_only=True))
            if (path / CHOICE_OPTIMIZER_STATE).is_file():  # absent from checkpoints older than the choice loss
                self.choice_optimizer.load_state_dict(torch.load(path / CHOICE_OPTIMIZER_STATE, weights_only=True))
        if (path / RNG_STATE).is_file():
            torch.set_rng_state(torch.load(path / RNG_STATE, weights_only=True))

    @property
    def _sharded(self) -> bool:
        return self.acc.distributed_type.name in ("FSDP", "DEEPSPEED")
