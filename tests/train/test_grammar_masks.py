"""The trainer's log π over the tokens the grammar allowed: packed masks as xgrammar packs them, and, on real
SmolLM2 completions drawn under a JSON schema, the trainer's log π_old matching the engine's logged log μ
(the acceptance bound: mean |log π_old − log μ| < 0.05 nats over free tokens) where the whole-vocabulary
log-softmax misses it by far more."""

from __future__ import annotations

import asyncio
import os

import pytest
import torch
from deepresearch.train.update.grammar_masks import pack_bits, unpack_bits

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def test_bits_pack_as_xgrammar_packs_them():
    import xgrammar as xgr

    torch.manual_seed(0)
    vocab = 100
    allowed = torch.rand(3, vocab) < 0.3
    allowed[:, 31] = True  # the sign bit of the first word
    packed = pack_bits(allowed)
    assert packed.dtype == torch.int32 and packed.shape == (3, 4)
    assert torch.equal(unpack_bits(packed, vocab), allowed)
    logits = torch.zeros(3, vocab)
    xgr.apply_token_bitmask_inplace(logits, packed)
    assert torch.equal(logits > float("-inf"), allowed)


SCHEMA = {"type": "object", "properties": {
    "tool": {"enum": ["search", "open", "done"]},
    "input": {"type": "string"},
}, "required": ["tool", "input"], "additionalProperties": False}
MESSAGES = [{"role": "system", "content": "You choose the next research action. Reply as JSON."},
            {"role": "user", "content": "Question: Who designed the Analytical Engine?\nChoose the next action."}]


@pytest.fixture(scope="module")
def model_dir():
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir

    from ..model.conftest import model_cache_dir

    return embedded_model_dir(model_cache_dir())


def _completions(model_dir, max_tokens: int, bf16_products: str = "off") -> list:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig
    from deepresearch.agent.model.types import Sampling

    async def draw():
        config = EngineConfig(max_batch=4, jump_forward="off", bf16_products=bf16_products)
        model = EmbeddedChatModel.load(model_dir, config)
        try:
            return await asyncio.gather(*(model.chat(MESSAGES, schema=SCHEMA, sampling=Sampling(
                temperature=1.0, max_tokens=max_tokens, seed=seed)) for seed in range(4)))
        finally:
            await model.close()

    return asyncio.run(draw())


# "on": the engine's prefills in bf16 (embedded/layers/bf16.py), the trainer's log π_old in fp32 all the same.
@pytest.mark.parametrize("bf16_products", ["off", "on"])
def test_trainer_logps_over_the_allowed_tokens_match_the_sampler(model_dir, bf16_products: str):
    from deepresearch.train.config import TrainSettings
    from deepresearch.train.update.batching import loss_positions
    from deepresearch.train.update.samples import TrainingSample
    from deepresearch.train.update.updater import GRPOUpdater

    # max_tokens 24: the free string runs into the engine's closing reserve, so narrowed positions are replayed.
    completions = _completions(model_dir, max_tokens=24, bf16_products=bf16_products)
    assert any(c.narrowed_positions for c in completions)
    samples = [TrainingSample(
        sample_id=f"r{i}:1", run_id=f"r{i}", group_id="g", role="executor", prompt_ids=c.prompt_token_ids,
        completion_ids=c.completion_token_ids, sampling_logprobs=c.logprobs, forced_positions=c.forced_positions,
        narrowed_positions=c.narrowed_positions, json_schema=SCHEMA, advantage=1.0,
    ) for i, c in enumerate(completions)]
    settings = TrainSettings()
    settings.grpo = settings.grpo.model_copy(update={"temperature": 1.0})
    updater = GRPOUpdater(model_dir, settings)  # a fresh LoRA is the identity: π_old is the base model
    with torch.no_grad():
        masked = updater._logps(updater._collate(samples))
        updater_mismatches = updater.masks.mismatches
        updater.masks, updater.cfg = None, updater.cfg.model_copy(update={"grammar_masked_logps": False})
        plain = updater._logps(updater._collate(samples))
    logged = torch.tensor([s.sampling_logprobs[i] for s in samples for i in loss_positions(s, True)])
    gap_masked = (masked - logged).abs().mean().item()
    gap_plain = (plain - logged).abs().mean().item()
    print(f"gap masked {gap_masked:.4f} plain {gap_plain:.4f} over {logged.numel()} tokens; replay mismatches "
          f"{updater_mismatches}")
    assert gap_masked < 0.05, gap_masked
    assert updater_mismatches == 0
    assert gap_plain > 4 * gap_masked and gap_plain > 0.05, (gap_plain, gap_masked)
    assert torch.isfinite(masked).all()
