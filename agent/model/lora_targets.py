"""The layers a LoRA adapter adapts: every linear projection of a decoder block.

One tuple for the three places that must agree: the trainer's default targets (train.lora.target_modules),
the modules vLLM lets adapters wrap (`serve-model --lora-target-modules`: never lm_head), and the projections
the embedded engine adds LoRA products to.
"""

LORA_TARGET_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
