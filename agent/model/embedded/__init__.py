"""The embedded engine: SmolLM2-135M-Instruct in-process on the CPU, token-exact, batched.

Read from the top down; each room imports only the rooms below it:

- chat_model.py: `EmbeddedChatModel`, the `ChatModel` face: prompts, requests in, completions out.
- config.py: `EngineConfig`, the one value that says how the engine runs.
- engine/: scheduling. One worker thread admits jobs into a running batch (continuous batching), keeps the
  batch's KV cache, reuses prompt prefixes' keys/values and identical greedy requests' results.
- layers/: the lean forward pass (the Llama computation with OpenBLAS / GGUF-block / bf16 products, attention
  split over two cores, per-row LoRA products).
- decoding/: what token comes next: JSON-schema grammars (xgrammar) and their disk store, jump-forward drafts,
  a step's logits, sampling.
- models/: the weights as torch modules (`LlamaWeights`) and the LoRA adapters loaded on them (`AdapterSet`).
- kernels/: the C kernel that multiplies by the GGUF's quantised blocks, its build, and the block products.
- loaders/: files in: the packaged GGUF and its fp32 conversion, a GGUF's tensor table, a LoRA adapter's files.
- disk_store.py: what the engine keeps on disk for the next process, written whole or not at all.
"""
