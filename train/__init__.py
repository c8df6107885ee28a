"""The trainer: the policy model's LoRA adapter learns from the agent's own runs.

    config.py    the settings every part reads (app/ fills them in and passes them down)
    policy.py    the policy being trained: the base model + a LoRA adapter (both losses load it here)
    base_model.py  which base weights, when a model server answers
    update/      one update of the adapter: the GRPO objective (update/grpo.py, the maths in one file),
                 the optimiser steps, batching, samples, grammar masks, device, `accelerate launch`
    rounds/      the closed loop, a round at a time: questions → rollouts → rewards → update → gate
    choice/      the choice losses: the answer re-ranker's and the bridge hop's pick among candidates,
                 trained from runs or from QA questions with simulated evidence; the ranker's feature fit
    adapters/    the registry of published adapters, the eval gate, the shipped starter adapter, and
                 adapter arithmetic (averaging, rank cut, scaling)

Imports run one way: rounds → update → choice → adapters, with policy.py and config.py below them all.
"""
