"""Model runtime: one `ChatModel` interface (base.py, types.py) with two backends.

- embedded*.py: SmolLM2-135M-Instruct in-process (transformers' weights, fp32; embedded_forward.py computes
  its forward pass with OpenBLAS products), continuous batching, xgrammar JSON-schema decoding, per-row
  LoRA adapters (peft), seeded sampling, token-exact completions.
- openai_client.py: a vLLM / OpenAI-compatible server (token ids and logprobs from vLLM, runtime LoRA).
- factory.py: `build_model(settings, cache_dir=..., adapters_dir=...)` picks one from ModelSettings.
- server.py, vllm_install.py: run vLLM (`deepresearch serve-model`) from its own venv.

Nothing heavy is imported here: import the submodule you need.
"""
