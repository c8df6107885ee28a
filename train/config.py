"""Settings the training layer defines for itself; app/ fills them in and passes them down.

Field names follow TRL's `GRPOConfig` wherever the concept exists there, so a reader who knows
TRL can read our configs (num_generations, epsilon, epsilon_high, beta, loss_type, …).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from deepresearch.agent.model.lora_targets import LORA_TARGET_MODULES
from pydantic import BaseModel, Field, field_validator

# Our short names for the two aggregations the brief talks about, mapped onto TRL's loss types.
_LOSS_ALIASES = {"token": "dapo", "sequence": "grpo"}


class GRPOSettings(BaseModel):
    """The GRPO objective and the optimiser (TRL GRPOConfig names)."""

    num_generations: int = Field(8, ge=2, le=256, description="runs per question (group size G)")
    temperature: float = Field(1.0, gt=0.0, le=5.0, description="sampling temperature of rollouts; "
                               "the trainer divides logits by it so its logprobs match the logged ones")
    epsilon: float = Field(0.2, gt=0.0, lt=1.0, description="lower clip: ratio ≥ 1 − epsilon")
    epsilon_high: float = Field(0.28, gt=0.0, description="upper clip: ratio ≤ 1 + epsilon_high (DAPO)")
    beta: float = Field(0.0, ge=0.0, description="KL weight to the base model (adapter disabled); 0 = no KL")
    loss_type: Literal["dapo", "grpo", "dr_grpo"] = Field(
        "dapo", description="dapo = token-mean over the batch ('token'); grpo = mean of per-sequence "
        "token-means ('sequence'); dr_grpo = token-sum / (sequences × max_completion_length)"
    )
    scale_rewards: Literal["group", "batch", "none"] = Field(
        "group", description="divide advantages by the group's std, the batch std, or not at all (Dr. GRPO)"
    )
    stratify: Literal["none", "searches"] = Field(
        "none", description="advantages within strata of a group's runs with the same number of search calls "
        "(Stratified GRPO); a stratum of one run, or with equal rewards, gets advantage 0"
    )
    importance_sampling_level: Literal["token", "sequence"] = Field(
        "token", description="policy ratio per token (GRPO) or one per sequence from the mean log-ratio (GSPO)"
    )
    vllm_importance_sampling_correction: bool = Field(
        True, description="reweight by π_trainer/π_sampler against the logged sampling logprobs "
        "(TRL's name; applies to any engine that logged them)"
    )
    vllm_importance_sampling_mode: Literal["token_truncate", "token_mask", "sequence_truncate", "sequence_mask"] = (
        Field("token_truncate", description="truncate (TIS) or mask ratios above the cap, per token or sequence")
    )
    vllm_importance_sampling_clip_max: float = Field(2.0, gt=0.0, description="importance-weight cap C")
    mask_truncated_completions: bool = Field(False, description="drop completions cut off by max_tokens")
    skip_forced_tokens: bool = Field(
        True, description="no loss on tokens the sampler had no choice over (grammar-forced: logged p ≥ 0.9999)"
    )
    grammar_masked_logps: bool = Field(
        True, description="log π over the tokens the logged JSON schema allowed (the distribution the sampler "
        "drew from), replayed with xgrammar; off = over the whole vocabulary"
    )
    max_completion_length: int = Field(384, ge=1, description="dr_grpo's constant normaliser")
    num_iterations: int = Field(1, ge=1, le=16, description="passes over one round's samples")
    learning_rate: float = Field(1e-5, gt=0.0)
    weight_decay: float = Field(0.0, ge=0.0)
    adam_beta1: float = Field(0.9, ge=0.0, lt=1.0)
    adam_beta2: float = Field(0.99, ge=0.0, lt=1.0)
    max_grad_norm: float = Field(1.0, gt=0.0)
    per_device_train_batch_size: int | None = Field(
        None, ge=1, description="sequences per micro-batch; None = by device: 1 on CPUs (no padding, causal fast "
        "path), 8 on a GPU (max_tokens_per_microbatch still bounds the memory)"
    )
    gradient_accumulation_steps: int = Field(
        0, ge=0, description="micro-batches per optimiser step; 0 = the whole round in one step (on-policy)"
    )
    max_tokens_per_microbatch: int = Field(8192, ge=64, description="padded tokens per micro-batch, upper bound")
    gradient_checkpointing: bool | None = Field(
        None, description="recompute activations in backward: ~⅓ more compute for far less memory; "
        "None = by device: on with a GPU, off on CPUs"
    )
    answer_choice_lr: float = Field(
        3e-4, ge=0.0, description="the scored choices' loss (choice/answer_choice.py) over the sets the round's "
        "runs logged: the re-ranker's candidates with a question's gold among them, the hop's bridge names "
        "(choice/bridge_examples.py); its own AdamW step size (session 32's best for the LoRA re-ranker); 0 = off"
    )
    seed: int = 0

    @field_validator("loss_type", mode="before")
    @classmethod
    def _alias(cls, v: str) -> str:
        return _LOSS_ALIASES.get(v, v)


class LoraSettings(BaseModel):
    r: int = Field(16, ge=1, le=512)
    lora_alpha: int = Field(32, ge=1)
    lora_dropout: float = Field(0.0, ge=0.0, lt=1.0)
    target_modules: list[str] = Field(default_factory=lambda: list(LORA_TARGET_MODULES))


class RewardSettings(BaseModel):
    """Weights of the composable reward terms; the run's reward is their weighted sum."""

    correctness: float = Field(1.0, description="weight of the tiered outcome (malformed < wrong < not found < ok)")
    f1: float = Field(0.5, description="weight of token F1 of the answer vs gold + aliases")
    citation: float = Field(0.3, description="weight of the citation reward (verified, among gold docs)")
    evidence: float = Field(0.3, description="weight of the share of gold documents the run found evidence in")
    hop_evidence: float = Field(
        0.15, description="weight of the share of the run's bridge hops that found evidence in a gold document not "
        "found before them (absent without a hop: runs without one score as before)"
    )
    cost: float = Field(0.1, description="weight of the cost penalty (tool calls, tokens)")
    feedback: float = Field(1.0, description="weight of user feedback when the trace has it")
    judge: float = Field(0.0, description="weight of the LLM-judge group ranking (0 = off)")
    information: float = Field(
        0.0, description="weight of the information gain: the policy's mean log-probability of the gold answer "
        "given the run's evidence minus without it (nats; 0 = off, not computed)"
    )
    tier_malformed: float = -1.0
    tier_wrong: float = 0.0
    tier_not_found: float = 0.25
    tier_correct: float = 1.0
    correct_f1: float = Field(0.8, ge=0.0, le=1.0, description="F1 at or above which an answer counts as correct")
    tool_call_cost: float = Field(0.02, ge=0.0, description="penalty per tool call")
    token_cost_per_1k: float = Field(0.005, ge=0.0, description="penalty per 1,000 LLM tokens")
    role_weights: dict[str, float] = Field(
        default_factory=dict, description="per-role loss weight, e.g. {'planner': 0.5}; missing roles = 1.0; "
        "'answer' and 'bridge' (the re-ranker's and the hop's choice losses) are on or off (> 0 or 0), their step "
        "size is grpo.answer_choice_lr"
    )

    def training_only(self, roles: set[str] | list[str]) -> RewardSettings:
        """These settings with weight 1 for `roles` and 0 for every other trainable role."""
        return self.model_copy(update={"role_weights": {role: float(role in roles) for role in trainable_roles()}})

    def trained_roles(self) -> frozenset[str] | None:
        """The roles with a positive weight, when some role is left out (weight 0); None = every role.
        The adapter answers only for these roles, so what is not trained does not change."""
        every = trainable_roles()
        trained = frozenset(role for role in every if self.role_weights.get(role, 1.0) > 0)
        return None if trained == frozenset(every) else trained


def trainable_roles() -> tuple[str, ...]:
    """The agent's prompt roles, whose calls are token samples, and the two scored choices trained by their own
    loss (choice/answer_choice.py): "answer" (the answer re-ranker's) and "bridge" (the follow-up hop's entity)."""
    from deepresearch.agent.prompts import ROLES
    from deepresearch.agent.reader import ANSWER_ROLE, BRIDGE_ROLE

    return (*ROLES, ANSWER_ROLE, BRIDGE_ROLE)


class RolloutSettings(BaseModel):
    concurrency: int = Field(8, ge=1, le=256, description="runs in flight at once (the model batches them)")
    questions_per_round: int = Field(4, ge=1, description="questions per training round")
    greedy_untrained_roles: bool = Field(
        True, description="roles left out of the update (role weight 0) decode greedily in rollouts: "
        "their sampling would only add noise to the trained roles' advantages"
    )
    index: str | None = Field(None, description="local index served as the local web (default: the app's index)")
    model_urls: list[str] = Field(
        default_factory=list, description="extra OpenAI-compatible servers to spread rollouts over"
    )


class PublishSettings(BaseModel):
    dev_questions: Path | None = Field(None, description="QA jsonl of the gate's dev set (default: --questions)")
    dev_corpus: Path | None = Field(None, description="corpus jsonl the gate evaluates on (default: --corpus)")
    dev_size: int = Field(16, ge=1, description="dev questions evaluated per candidate adapter")
    metric: str = Field("f1", description="eval metric the gate compares")
    tolerance: float = Field(0.0, ge=0.0, description="allowed drop of the metric before it counts as a regression")
    eval_seeds: list[int] = Field(default_factory=lambda: [0])


class SynthSettings(BaseModel):
    """Questions synthesized from documents, with answers known by construction (train/synth/)."""

    questions: int = Field(400, ge=4, le=100_000, description="questions to keep (train and dev together)")
    shares: dict[str, float] = Field(
        default_factory=lambda: {"one_hop": 0.5, "two_hop": 0.2, "comparison": 0.15, "unanswerable": 0.15},
        description="share of each kind; what a kind cannot fill goes to one_hop")
    dev_share: float = Field(0.15, ge=0.0, lt=1.0, description="share of each kind held out as the gate's dev set")
    held_out_share: float = Field(0.05, ge=0.0, lt=0.5, description="share of documents left out of the served "
                                  "corpus (at least one, at most what the unanswerable questions need): the "
                                  "sources of the unanswerable questions")
    opening_share: float = Field(0.04, ge=0.0, le=1.0, description="most of `questions` a kind may ask with one "
                                 "opening (the words before the subject: 'When was'), at least one; 1 = no cap")
    search_k: int = Field(5, ge=1, le=50, description="the search must find a question's source in its top k")
    max_overlap: float = Field(0.5, ge=0.0, le=1.0, description="most of a question's word 4-grams that may stand "
                               "in its source unit")
    max_scan_docs: int = Field(4000, ge=1, description="documents read for facts (a large corpus is sampled)")
    from_runs: bool = Field(True, description="train --from-runs: also synthesize over the sources the runs read")
    from_runs_share: float = Field(0.5, ge=0.0, le=1.0, description="train --from-runs: share of a round's "
                                   "questions that are synthesized (the rest are replays)")
    seed: int = 0


class UpdateLaunchSettings(BaseModel):
    launcher: Literal["inprocess", "accelerate"] = Field(
        "inprocess", description="inprocess = this process (CPU, one GPU); accelerate = `accelerate launch` workers"
    )
    accelerate_config: str = Field("ddp", description="ddp | fsdp | zero2 | zero3 (shipped) or a yaml path")
    num_processes: int = Field(1, ge=1, le=1024)


class TrainSettings(BaseModel):
    base_model: Path | None = Field(
        None, description="HF weights of the served model (needed with a model server; embedded: found itself)"
    )
    grpo: GRPOSettings = Field(default_factory=GRPOSettings)
    launch: UpdateLaunchSettings = Field(default_factory=UpdateLaunchSettings)
    lora: LoraSettings = Field(default_factory=LoraSettings)
    rewards: RewardSettings = Field(default_factory=RewardSettings)
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    publish: PublishSettings = Field(default_factory=PublishSettings)
    synth: SynthSettings = Field(default_factory=SynthSettings)
    adapter_prefix: str = Field("grpo", description="adapter names are PREFIX-rNNNN")
    watch_poll_s: float = Field(30.0, gt=0.0, description="--watch: seconds between checks for new runs")
    watch_min_new_runs: int = Field(4, ge=1, description="--watch: new logged questions needed for a round")

    def trains_choice(self, role: str) -> bool:
        """A scored choice's loss (choice/answer_choice.py) is on: a step size, and its role not left out."""
        trained = self.rewards.trained_roles()
        return self.grpo.answer_choice_lr > 0 and (trained is None or role in trained)

    def trains_answer_choice(self) -> bool:
        """The re-ranker's choice (role `answer`)."""
        from deepresearch.agent.reader import ANSWER_ROLE

        return self.trains_choice(ANSWER_ROLE)

    def trains_bridge_choice(self) -> bool:
        """The follow-up hop's choice (role `bridge`)."""
        from deepresearch.agent.reader import BRIDGE_ROLE

        return self.trains_choice(BRIDGE_ROLE)
