"""The embedded chat model: SmolLM2-135M-Instruct in-process, fp32, batched.

`EmbeddedChatModel.load(model_dir, EngineConfig(...))` reads the converted safetensors (see
loaders/packaged_model.py) in a couple of seconds. Every `complete()` call, from any number of coroutines, goes
to one batching engine thread (engine/batching.py); prompts are the tokenizer's chat template, and the token ids
in the returned `Completion` are exactly those fed to and produced by the model. The forward pass is the lean one
(layers/forward.py) unless `EngineConfig.forward` is "transformers" or the batch mixes adapters.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base import ChatModel, ModelError
from ..types import ChatRequest, Completion, Message, Timings
from .config import EngineConfig
from .layers.forward import LEAN_TORCH_THREADS

if TYPE_CHECKING:
    from .decoding.grammar import RowGrammar
    from .decoding.grammar_store import GrammarStore
    from .engine.prefix_cache import PrefixStore

# libgomp reads this once, when torch is first imported: busy-waiting OpenMP threads on a 2-core box
# shared with other work make every step 5-10x slower.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


class EmbeddedChatModel(ChatModel):
    def __init__(self, model: Any, tokenizer: Any, config: EngineConfig = EngineConfig(), *,
                 prefix_store: PrefixStore | None = None, grammar_store: GrammarStore | None = None) -> None:
        """An engine over loaded weights (`model`: models/llama.py's LlamaWeights or a transformers model) and
        their tokenizer; `load` builds one from a model directory and decides `config` first (threads, bf16)."""
        from .decoding.grammar import GrammarCache
        from .engine.batching import BatchingEngine
        from .engine.greedy_reuse import GREEDY_RESULTS, GreedyResults
        from .models.adapters import AdapterSet

        self.config = config
        self.model_name = config.model_name
        self.load_s = 0.0
        self._tokenizer = tokenizer
        self._tokenizer_lock = threading.Lock()
        self._system_ids: dict[str, list[int]] = {}
        model_config = model.config
        self.max_context = int(model_config.max_position_embeddings)
        self._grammars = GrammarCache(tokenizer, vocab_size=int(model_config.vocab_size), store=grammar_store)
        self._adapters = AdapterSet(model)
        self._greedy = GreedyResults(GREEDY_RESULTS if config.reuse_greedy else 0)
        eos = {tokenizer.eos_token_id, *_as_list(model_config.eos_token_id)} - {None}
        self._engine = BatchingEngine(
            self._adapters,
            tokenizer,
            self._tokenizer_lock,
            config,
            eos_ids={int(e) for e in eos},
            pad_id=int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id),
            prefix_store=prefix_store,
        )

    @classmethod
    def load(cls, model_dir: Path, config: EngineConfig = EngineConfig()) -> EmbeddedChatModel:
        """Load fp32 weights and tokenizer from a safetensors directory and start the engine as `config` says
        (config.py), with what it leaves open decided here: its threads, and for bf16 products "auto" this CPU's
        probe. With a `config.store_dir`, the base model's prefixes and compiled grammars are kept there."""
        started = time.perf_counter()
        import torch
        from transformers import PreTrainedTokenizerFast

        from .layers.bf16 import use_bf16
        from .models.llama import LlamaWeights

        config = replace(config, threads=config.thread_count)
        torch.set_num_threads(config.thread_count)
        model_dir = Path(model_dir)
        if not (model_dir / "config.json").is_file():
            raise ModelError(f"no model at {model_dir} (config.json missing)")
        # The converted model's tokenizer is a tokenizer.json: loading that class directly skips
        # AutoTokenizer's resolution through every model config (~0.7 s of each start, same tokens).
        tokenizer = PreTrainedTokenizerFast.from_pretrained(model_dir)
        # Not transformers' model class: its import alone is ~3 s of each start (models/llama.py). An
        # adapter or `forward="transformers"` builds it later, on the same weights.
        model = LlamaWeights.load(model_dir)
        lean = config.forward == "lean"
        if config.gguf_products and lean:
            from .kernels.gguf_blocks import packaged_blocks

            model.gguf_blocks = packaged_blocks(model_dir, model.config, config.thread_count)
        bf16 = lean and use_bf16(config.bf16_products, config.thread_count, config.store_dir)
        config = replace(config, bf16_products="on" if bf16 else "off")
        prefix_store = grammar_store = None
        if config.store_dir is not None:
            from .decoding.grammar_store import GRAMMAR_STORE_DIR_NAME, GrammarStore
            from .engine.prefix_cache import STORE_DIR_NAME, PrefixStore

            store_dir = Path(config.store_dir)
            if config.prefix_cache:
                prefix_store = PrefixStore(store_dir / STORE_DIR_NAME, model_dir / "model.safetensors",
                                           computed_by=_computed_by(config))
            grammar_store = GrammarStore(store_dir / GRAMMAR_STORE_DIR_NAME, model_dir / "tokenizer.json",
                                         vocab_size=int(model.config.vocab_size))
        chat_model = cls(model, tokenizer, config, prefix_store=prefix_store, grammar_store=grammar_store)
        chat_model.load_s = time.perf_counter() - started
        return chat_model

    # --- prompts ----------------------------------------------------------------------
    def prompt_token_ids(self, messages: list[Message]) -> list[int]:
        """The chat template rendered by the tokenizer and tokenised as-is (no extra special tokens),
        the same way vLLM's chat endpoint builds its prompt."""
        rendered = [m.model_dump() for m in messages]
        with self._tokenizer_lock:
            text = self._tokenizer.apply_chat_template(rendered, tokenize=False, add_generation_prompt=True)
            return list(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def prefix_length(self, messages: list[Message], prompt_ids: list[int]) -> int:
        """How many leading tokens of `prompt_ids` render the system message alone: the part of the prompt
        every call of a role shares (0 when there is none, or it does not tokenise as a prefix)."""
        if len(messages) < 2 or messages[0].role != "system":
            return 0
        content = messages[0].content
        ids = self._system_ids.get(content)
        if ids is None:
            with self._tokenizer_lock:
                text = self._tokenizer.apply_chat_template([messages[0].model_dump()], tokenize=False)
                ids = list(self._tokenizer(text, add_special_tokens=False)["input_ids"])
            if len(self._system_ids) >= 256:  # system messages vary little (one per role and budget)
                self._system_ids.clear()
            self._system_ids[content] = ids
        return len(ids) if prompt_ids[: len(ids)] == ids else 0

    # --- ChatModel --------------------------------------------------------------------
    async def complete(self, request: ChatRequest) -> Completion:
        from .engine.jobs import GenerationJob

        adapter = self.resolve_adapter(request.adapter)
        if adapter is not None and adapter not in self._adapters.names():
            raise ModelError(f"unknown adapter {adapter!r}; loaded: {', '.join(self.adapters()) or 'none'}")
        prompt_ids = self.prompt_token_ids(request.messages)
        if len(prompt_ids) >= self.max_context:
            raise ModelError(f"prompt of {len(prompt_ids)} tokens does not fit the context of {self.max_context}")
        key = self._greedy.key(adapter, prompt_ids, request)  # None: decoded for this request alone
        shared = self._greedy.join(key)
        started = time.perf_counter()
        if shared is None:
            grammar = await self._grammar(request)
            shared = self._greedy.join(key)  # an equal request got here while the grammar compiled
        reused = shared is not None
        if shared is not None:
            job = shared.job  # an equal greedy request's decode (engine/greedy_reuse.py)
        else:
            job = GenerationJob(prompt_ids, request.sampling, grammar, adapter,
                                prefix_len=self.prefix_length(request.messages, prompt_ids))
            self._engine.submit(job)
            shared = self._greedy.add(key, job)
        try:
            result = await asyncio.wrap_future(job.future)
        except asyncio.CancelledError:
            if shared is not None:
                self._greedy.leave(shared)
            else:
                job.cancelled = True
            raise
        # A reused result did no model work of its own: only the wait shows.
        timings = Timings(total_s=time.perf_counter() - started) if reused else result.timings
        parsed = None
        if request.json_schema is not None:
            try:
                parsed = json.loads(result.text)
            except json.JSONDecodeError:
                parsed = None  # cut by max_tokens: finish_reason says "length"
        return Completion(
            text=result.text,
            parsed=parsed,
            prompt_token_ids=prompt_ids,
            completion_token_ids=list(result.token_ids),
            logprobs=list(result.logprobs),
            forced_positions=list(result.forced_positions),
            narrowed_positions=list(result.narrowed_positions),
            model=self.model_name,
            adapter=adapter,
            finish_reason=result.finish_reason,  # type: ignore[arg-type]
            timings=timings,
        )

    async def _grammar(self, request: ChatRequest) -> RowGrammar | None:
        """A matcher for the request's JSON schema (None without one)."""
        from .decoding.grammar import closing_reserve

        if request.json_schema is None:
            return None
        # A new schema compiles off the event loop (up to ~1 s for a large one); then it is cached.
        compiled = self._grammars.cached(request.json_schema)
        if compiled is None:
            compiled = await asyncio.to_thread(self._grammars.compile, request.json_schema)
        return self._grammars.matcher(compiled, closing_reserve(request.json_schema, request.sampling.max_tokens))

    async def score(self, prompt: str, continuations: list[str], adapter: str | None = None) -> list[list[float]]:
        adapter = self.resolve_adapter(adapter)
        if adapter is not None and adapter not in self._adapters.names():
            raise ModelError(f"unknown adapter {adapter!r}; loaded: {', '.join(self.adapters()) or 'none'}")
        if not continuations:
            return []
        with self._tokenizer_lock:
            prompt_ids = list(self._tokenizer(prompt, add_special_tokens=False)["input_ids"])
            tails = [list(self._tokenizer(c, add_special_tokens=False)["input_ids"]) for c in continuations]
        if len(prompt_ids) + max(map(len, tails)) > self.max_context:
            raise ModelError(f"scoring prompt of {len(prompt_ids)} tokens does not fit the context")

        def forward() -> list[list[float]]:
            import torch

            from .engine.kv_batch import new_cache

            rows = [prompt_ids + tail for tail in tails]
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), self._engine.pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for i, row in enumerate(rows):  # right padding: positions stay 0..n-1 for every row
                ids[i, : len(row)] = torch.tensor(row)
                mask[i, : len(row)] = 1
            positions = torch.arange(width).expand(len(rows), width)
            # Only the columns from the prompt's last token on predict tail tokens: the vocabulary projection
            # and log-softmax of the prompt's other columns would be thrown away.
            keep = width - len(prompt_ids) + 1
            with torch.inference_mode():
                logits = self._engine.forward(ids, mask, positions, new_cache(self._engine.layers), keep,
                                              [adapter] * len(rows))
            logp = torch.log_softmax(logits.float(), dim=-1)  # column j predicts tail token j
            return [[float(logp[i, j, tok]) for j, tok in enumerate(tail)] for i, tail in enumerate(tails)]

        # Between decode steps (like adapter loads); the next step re-arranges the adapters for its rows.
        return await asyncio.wrap_future(self._engine.call(forward))

    def clear_prefix_cache(self, system: bool = True) -> None:
        """Forget the kept prompts' keys/values and, unless `system` is False, the system messages' (benchmarks
        measure a cold engine with it, or one that has only seen each role once)."""
        prefixes = self._engine.prefixes
        if prefixes is not None:
            self._engine.call(prefixes.clear if system else prefixes.prompts.clear).result()

    async def load_adapter(self, name: str, path: Path) -> None:
        await asyncio.wrap_future(self._engine.call(lambda: self._adapters.load(name, Path(path)), name))
        self._greedy.forget(name)

    def load_adapter_blocking(self, name: str, path: Path) -> None:
        """For synchronous callers (build_model); never call from inside a running event loop."""
        self._engine.call(lambda: self._adapters.load(name, Path(path)), name).result()
        self._greedy.forget(name)

    async def unload_adapter(self, name: str) -> None:
        if name not in self._adapters.names():
            raise ModelError(f"unknown adapter {name!r}; loaded: {', '.join(self.adapters()) or 'none'}")
        await asyncio.wrap_future(self._engine.call(lambda: self._adapters.unload(name), name))
        self._greedy.forget(name)
        if self.active_adapter == name:
            self.active_adapter = None

    def adapters(self) -> list[str]:
        return self._adapters.names()

    async def close(self) -> None:
        await asyncio.to_thread(self._engine.close)


def _computed_by(config: EngineConfig) -> str:
    """What decides the rounding of a prefix's keys/values: the lean forward sets torch's threads itself, and
    computes long products in bf16 or fp32."""
    if config.forward == "lean":
        return (f"lean forward, torch on {LEAN_TORCH_THREADS} thread"
                + (", bf16 products" if config.bf16_products == "on" else ""))
    return f"{config.forward} forward, {config.thread_count} threads"


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
