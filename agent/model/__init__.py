"""Model runtime: one `ChatModel` interface (base.py, types.py) with two backends.

- embedded/: SmolLM2-135M-Instruct in-process, a CPU inference engine of its own (its __init__ maps its rooms):
  continuous batching, prefix cache, JSON-schema decoding with jump-forward, a lean forward pass with per-row
  LoRA, GGUF kernels; one `EngineConfig` (embedded/config.py) says how it runs.
- remote/: a vLLM / OpenAI-compatible server (token ids and logprobs from vLLM, runtime LoRA), and running
  vLLM from its own venv (`deepresearch serve-model`).
- factory.py: `build_model(settings, cache_dir=..., adapters_dir=...)` picks one from ModelSettings.
- policy.py: how one run decodes (`RunPolicy`); lora_targets.py: the layers a LoRA adapts, for both backends and
  the trainer.

Nothing heavy is imported here: import the submodule you need.
"""
