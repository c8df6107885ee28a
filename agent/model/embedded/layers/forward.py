"""A lean forward pass for the embedded Llama-architecture model, with its matrix products in OpenBLAS.

Why: a decode step of the 135M model is ~120 small matrix products (a few rows × 576 × up to 3072, and
the 49k-row vocabulary projection). torch's CPU wheel sends fp32 products to MKL, which on an AMD CPU
takes a slow generic path, and on an Intel one is ~5× slower than OpenBLAS at 1 row; numpy's OpenBLAS
does them on weights laid out for it (products.py)
(`bench/model.py --workload agent --forward lean,transformers` compares the two forwards end to end).
Everything else — embedding, RMSNorm, RoPE, attention (torch's SDPA, `biased_attention`; a large call split over
two threads, split_attention.py), SiLU — stays in torch and reads the same tensors, so this is the
transformers LlamaForCausalLM computation with another GEMM library, equal to it to ~1e-5 in the logits.

The weights are not copied: the modules' weight tensors are views into the matrices the products read,
so an adapter merged into the weights (models/adapters.py) is what it computes with. The modules are
models/llama.py's (transformers' names, no transformers import) or a transformers LlamaForCausalLM.
In a batch that mixes adapters, each row's LoRA products are added to the base products (`RowLora`); an
adapter that is not plain LoRA goes through peft's layers and transformers.

Inputs follow the engine's conventions (engine/kv_batch.py): a 2D mask over the whole cache plus the
columns fed now (0 = padding or a hole), per-row positions, and a cache whose layers grow in place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

from ..config import ForwardKind
from ..decoding.step_logits import StepLogits
from ..kernels.gguf_blocks import matches
from ..models.adapters import AdapterSet, RowGroups
from .bf16 import Bf16Attention, torch_threads
from .products import JointProduct, RowPlan, matmul_t
from .split_attention import SPLIT_ATTENTION, sdpa

if TYPE_CHECKING:
    from ..kernels.gguf_blocks import GGUFBlocks

log = logging.getLogger(__name__)

Attend = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None], torch.Tensor]  # SDPA's arguments

LEAN_TORCH_THREADS = 1  # torch's threads during a lean pass (LeanForward.__call__ says why)
# Per-row GEMVs pay for more rows on a wide weight than a narrow one (products.py): gate/up (576 → 3072)
# up to 6 rows, the vocabulary (576 → 49,152) up to 12, in blocks of 4,096 columns (9.4 MB).
GATE_UP_PLAN = RowPlan(gemv_max_rows=6)
VOCABULARY_PLAN = RowPlan(gemv_max_rows=12, block=4096)
# With bf16 products on, an attention call of at least this many query rows (a row's feed × the 3 query heads of
# a KV head: a feed of 25+ tokens) runs as bf16 products too (bf16.py); a decode step's stays SDPA's fp32.
# On the 41 agent calls, two runs of three alternating rounds (session 49): batch 1 −6 to −11 %, batch 8 −10 % and
# none (dev/results/bench-bf16-products/).
BF16_MIN_QUERIES = 75


def supports(model: Any) -> bool:
    """Whether `model` is a plain Llama causal LM on the CPU, which this forward computes exactly (no biases,
    default RoPE; numpy reads only CPU memory)."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "model_type", None) != "llama":
        return False
    rope = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {}
    if rope.get("rope_type", "default") != "default":
        return False
    if getattr(config, "attention_bias", False) or getattr(config, "mlp_bias", False):
        return False
    return all(p.device.type == "cpu" for p in model.parameters())


def _rms_norm(x: torch.Tensor, norm: Any) -> torch.Tensor:
    return norm.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + norm.variance_epsilon))


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


def attention_mask(mask: torch.Tensor, fed: int) -> torch.Tensor | None:
    """[rows, 1, fed, length] booleans: query column j (the j-th fed) sees key column c when c is real in
    its row and not after it. A padding query sees itself, so no query row is empty (an empty row would
    make NaNs that padding keys carry into later layers). None: every key is visible (plain decode)."""
    length = mask.shape[1]
    if fed == 1 and bool(mask.all()):
        return None
    keys = torch.arange(length)
    queries = torch.arange(length - fed, length).unsqueeze(1)
    visible = mask.bool()[:, None, None, :] & (keys <= queries)[None, None]
    return visible | (keys == queries)[None, None]


class RowAttention:
    """Attention of a step whose rows differ (a ragged jump-forward step, a left-padded cache): each row
    attends with its own real queries (the step's last columns of the row, else all) over its own columns,
    from its first real one. One batched call computes every row at the widest feed over the longest cache,
    padding included: at 8 rows, one feeding a 40-token draft beside rows feeding 1, it took 1.8× as long
    as the rows taken apart (13.9 against 7.8 ms a layer)."""

    def __init__(self, mask: torch.Tensor, fed: int, visible: torch.Tensor, group: int) -> None:
        real = mask.bool()
        length = real.shape[1]
        self.rows: list[tuple[int, int, int, torch.Tensor | None]] = []  # row, first column, queries, bias
        for row in range(real.shape[0]):
            first = int(real[row].to(torch.uint8).argmax())
            fed_real = real[row, length - fed :]
            queries = int(fed_real.sum())
            if queries == 0:
                continue
            if not bool(fed_real[fed - queries :].all()):
                queries = fed  # real columns that are not the step's last (score()'s right padding): take all
            row_bias = None  # one query that sees every column: SDPA's mask-free path
            if not (queries == 1 and bool(real[row, first:].all())):
                row_bias = grouped_bias(visible[row : row + 1, :, fed - queries :, first:], group)
            self.rows.append((row, first, queries, row_bias))

    def __call__(self, q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                 attend: Attend = sdpa) -> torch.Tensor:
        out = q.new_zeros(q.shape)  # padding queries stay 0 (they are packed away)
        fed = q.shape[2]
        for row, first, queries, row_bias in self.rows:
            out[row : row + 1, :, fed - queries :] = biased_attention(
                q[row : row + 1, :, fed - queries :], keys[row : row + 1, :, first:],
                values[row : row + 1, :, first:], row_bias, attend)
        return out


def grouped_bias(visible: torch.Tensor, group: int) -> torch.Tensor:
    """`visible` as the additive mask `biased_attention` takes: 0 where seen, -inf elsewhere, its query rows
    repeated for the group's query heads. Built once per step and shared by the layers: SDPA would convert a
    boolean mask again in every layer (~7 % of a 400-token prefill)."""
    bias = torch.zeros(visible.shape).masked_fill_(~visible, float("-inf"))
    return bias.repeat(1, 1, group, 1) if group > 1 else bias


def biased_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                     bias: torch.Tensor | None, attend: Attend = sdpa) -> torch.Tensor:
    """Attention of q [rows, heads, fed, dim] over keys/values [rows, kv_heads, length, dim] for grouped
    KV heads (query head h reads KV head h // group), `bias` a `grouped_bias` (None: every key is seen).
    The group's queries become extra query rows of their KV head, so the keys/values are read once per KV
    head: 1.5× faster than SDPA's `enable_gqa` with a mask at 8 rows × 900 columns on the AMD CPU, where a
    decode step is bound by reading the cache. `attend` computes it (`sdpa`, or `SPLIT_ATTENTION` on two cores)."""
    rows, heads, fed, dim = q.shape
    kv_heads = keys.shape[1]
    q = q.reshape(rows, kv_heads, heads // kv_heads * fed, dim)  # row g·fed + t of KV head j is head j·group + g
    return attend(q, keys, values, bias).view(rows, heads, fed, dim)


class RowLora:
    """The LoRA products of a step whose rows mix adapters: each adapter's tokens get x·Aᵀ·(s·B)ᵀ added to a
    projection's base output, as peft's mixed batch computes them, here in the same OpenBLAS products as
    the base weights (peft's path runs transformers' forward, whose MKL products are ~2× slower here)."""

    def __init__(self, groups: RowGroups, row_of_token: torch.Tensor) -> None:
        self._groups = []  # (the packed tokens of an adapter's rows, its products per layer)
        for rows, layers in groups:
            tokens = torch.isin(row_of_token, torch.tensor(rows)).nonzero().squeeze(1)
            if len(tokens):
                self._groups.append((tokens, layers))

    def add(self, out: torch.Tensor, x: torch.Tensor, layer: int, projection: str) -> torch.Tensor:
        for tokens, layers in self._groups:
            pair = layers[layer].get(projection)
            if pair is not None:
                out[tokens] += matmul_t(matmul_t(x[tokens], pair[0]), pair[1])
        return out


@dataclass(frozen=True)
class PassPlan:
    """How one lean pass computes, beside its inputs: each row's LoRA products (`RowLora`), whether products of
    few rows read the GGUF's blocks, the attention (`Attend`), and the threads of bf16 products (0: fp32)."""

    lora: RowGroups | None = None
    blocks: bool = False
    attend: Attend = sdpa
    bf16_threads: int = 0


class LeanForward:
    """Logits of the last `keep` columns for tokens fed on top of a KV cache (see the module docstring)."""

    def __init__(self, model: Any, bf16_threads: int = 0) -> None:
        """`bf16_threads` > 0: the layers' products of more rows than the GGUF blocks take, and attention calls of
        BF16_MIN_QUERIES query rows or more, run in bf16 on that many threads (bf16.py; the products only
        on the file's weights, of which they keep a bf16 copy, ~210 MB); the vocabulary projection stays fp32."""
        if not supports(model):
            raise ValueError("the lean forward computes plain Llama models only")
        config = model.config
        self._model = model.model
        # The vocabulary projection column-major too: 18.5-19.7 -> 10.6-12.1 ms at 3-8 rows. Its weight is the
        # input embedding's (tied), whose lookups then gather strided columns: a few ms per 400-token prefill.
        self._head = JointProduct([_base(model.lm_head)], VOCABULARY_PLAN)
        self._heads = int(config.num_attention_heads)
        self._kv_heads = int(config.num_key_value_heads)
        self._head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)
        self._inv_freq = self._model.rotary_emb.inv_freq
        self._scaling = float(getattr(self._model.rotary_emb, "attention_scaling", 1.0))
        # The plain nn.Linear of each projection (peft keeps the very same module as its `base_layer`), the
        # ones that read the same input computed in one product (products.py).
        self._layers = [
            (layer.input_layernorm, layer.post_attention_layernorm,
             JointProduct([_base(getattr(layer.self_attn, p)) for p in ("q_proj", "k_proj", "v_proj")]),
             JointProduct([_base(layer.self_attn.o_proj)]),
             JointProduct([_base(getattr(layer.mlp, p)) for p in ("gate_proj", "up_proj")], GATE_UP_PLAN),
             JointProduct([_base(layer.mlp.down_proj)]))
            for layer in self._model.layers
        ]
        self.blocks = self._attach_blocks(getattr(model, "gguf_blocks", None))
        self.bf16_threads = bf16_threads

    def _attach_blocks(self, blocks: GGUFBlocks | None) -> bool:
        """Let the products of few rows read the GGUF's blocks (kernels/gguf_blocks.py), if they hold exactly the
        weights loaded here; whether they do."""
        if blocks is None:
            return False
        pairs = [(self._head, blocks.head)]
        for (_, _, qkv, o_proj, gate_up, down), layer in zip(self._layers, blocks.layers, strict=True):
            pairs += [(qkv, layer.qkv), (o_proj, layer.o_proj), (gate_up, layer.gate_up), (down, layer.down)]
        if not all(matches(block, product.weight()) for product, block in pairs):
            log.warning("the GGUF's blocks in %s are not the loaded weights: products stay fp32", blocks.source)
            return False
        for product, block in pairs:
            product.blocks = block
        return True

    def __call__(self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
                 keep: int = 1, lora: RowGroups | None = None, file_weights: bool = True) -> torch.Tensor:
        """The logits of each row's last `keep` columns [rows, keep, vocab]. `file_weights`: the weights are
        still the file's (no adapter merged into them), so products of a few rows may read the GGUF's blocks."""
        return self.step(input_ids, mask, positions, cache, keep, lora, file_weights).logits

    def step(self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
             keep: int = 1, lora: RowGroups | None = None, file_weights: bool = True,
             few: torch.Tensor | None = None) -> StepLogits:
        """As `__call__`, but the columns marked in `few` ([rows, keep] bool) get no vocabulary projection:
        their hidden states are kept for the engine to project on the tokens the grammar allows there
        (decoding/step_logits.py)."""
        # torch's own ops here (norms, RoPE, SiLU, adds, attention) on one thread: with two, each op wakes the
        # sleeping OpenMP thread (OMP_WAIT_POLICY=PASSIVE), which on the AMD CPU cost more than it gained: at 240
        # tokens RMSNorm 499 against 124 µs on one, RoPE 625 against 160, attention 1.36 against 2.08 ms (a
        # prefill layer ~3.6 against ~2.9 ms). The products are OpenBLAS's, on its own threads.
        # A prefill computes the same numbers either way; a decode step's attention rounds differently (~3e-5 in
        # the logits), and the 41 recorded agent calls gave the same tokens; dev/results/bench-torch-one-thread/.
        # A large attention call is the exception: it is split over two threads of our own (the same numbers).
        threads = torch.get_num_threads()
        attend: Attend = SPLIT_ATTENTION if threads > 1 else sdpa
        if self.bf16_threads:
            attend = Bf16Attention(attend, self.bf16_threads, BF16_MIN_QUERIES)
        plan = PassPlan(lora, file_weights and self.blocks, attend, self.bf16_threads if file_weights else 0)
        with torch_threads(LEAN_TORCH_THREADS):
            return self._forward(input_ids, mask, positions, cache, keep, plan, few)

    def _forward(self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
                 keep: int, plan: PassPlan, few: torch.Tensor | None = None) -> StepLogits:
        lora, blocks, attend, bf16_threads = plan.lora, plan.blocks, plan.attend, plan.bf16_threads
        rows, fed = input_ids.shape
        heads, kv_heads, dim = self._heads, self._kv_heads, self._head_dim
        # The fed columns that are tokens. A ragged step (one row drafting 30 tokens beside rows feeding 1)
        # is padded to its widest row, but only the attention sees that shape: every other operation runs
        # on the real tokens alone, packed, so padding costs no matrix-product work.
        tokens = _Packing(mask[:, -fed:].bool())
        x = self._model.embed_tokens(tokens.pack(input_ids.reshape(rows * fed)))
        angles = tokens.pack(positions.reshape(rows * fed))[:, None].float() * self._inv_freq
        angles = torch.cat((angles, angles), dim=-1)
        cos, sin = (angles.cos() * self._scaling)[:, None], (angles.sin() * self._scaling)[:, None]
        visible = attention_mask(mask, fed)
        group = heads // kv_heads
        by_row = RowAttention(mask, fed, visible, group) if visible is not None and rows > 1 else None
        bias = None if visible is None or by_row else grouped_bias(visible, group)
        n = x.shape[0]
        row_lora = RowLora(lora, tokens.rows_of_tokens()) if lora else None

        def project(h: torch.Tensor, product: JointProduct, index: int, *names: str) -> torch.Tensor:
            out = product(h, blocks, bf16_threads)
            if row_lora:
                for part, name in zip(product.split(out), names, strict=True):
                    row_lora.add(part, h, index, name)
            return out

        q_and_k = (heads + kv_heads) * dim  # the first columns of the q, k, v product
        for index, (norm1, norm2, qkv, o_proj, gate_up, down) in enumerate(self._layers):
            h = _rms_norm(x, norm1)
            both = project(h, qkv, index, "q_proj", "k_proj", "v_proj")
            rotated = _rotate(both[:, :q_and_k].view(n, heads + kv_heads, dim), cos, sin)  # q and k in one go
            v = both[:, q_and_k:].view(n, kv_heads, dim)
            keys, values = cache.layers[index].update(tokens.unpack(rotated[:, heads:]), tokens.unpack(v))
            q = tokens.unpack(rotated[:, :heads])  # [rows, heads, fed, dim], as is o
            o = by_row(q, keys, values, attend) if by_row else biased_attention(q, keys, values, bias, attend)
            o = tokens.pack(o.transpose(1, 2).reshape(rows * fed, heads * dim))
            x = x + project(o, o_proj, index, "o_proj")
            gate, up = gate_up.split(project(_rms_norm(x, norm2), gate_up, index, "gate_proj", "up_proj"))
            x = x + project(F.silu(gate).mul_(up), down, index, "down_proj")
        # Logits of each row's last `keep` columns. A padding column's (and a few one's) are left unset: nobody
        # reads them, and zeroing [rows, keep, vocab] (47 MB at 8 rows × 30 drafted columns, new pages every
        # step) cost ~2 s of a batch-8 replay of the agent workload.
        if tokens.dense and few is None:
            return StepLogits(self._head(_rms_norm(x.view(rows, fed, -1)[:, fed - keep :], self._model.norm), blocks))
        last = tokens.real.clone()
        last[:, : fed - keep] = False
        hidden = None
        if few is not None:
            few = few & last[:, fed - keep :]
            last[:, fed - keep :] &= ~few
            hidden = _rms_norm(x.index_select(0, tokens.packed_index(few, fed - keep)), self._model.norm)
        logits = self._head(_rms_norm(x.index_select(0, tokens.packed_index(last)), self._model.norm), blocks)
        out = logits.new_empty((rows, keep, logits.shape[-1]))
        kept = last[:, fed - keep :].reshape(-1).nonzero().squeeze(1)
        out.view(rows * keep, -1).index_copy_(0, kept, logits)  # row copies: 1.5× a boolean-mask assignment
        if few is None:
            return StepLogits(out)
        return StepLogits(out, few, hidden, self._head.weight(), lambda h: self._head(h, blocks))


class _Packing:
    """Between a step's [rows, fed] columns (flattened row-major) and its real tokens packed in order."""

    def __init__(self, real: torch.Tensor) -> None:
        self.real = real
        self.rows, self.fed = real.shape
        self.dense = bool(real.all())  # no padding: packing is the identity (plain decoding, equal prefills)
        if not self.dense:
            flat = real.reshape(-1)
            self.index = flat.nonzero().squeeze(1)  # flat column of each packed token
            self.slot = torch.full((flat.numel(),), -1, dtype=torch.long)  # packed position of each flat column
            self.slot[self.index] = torch.arange(len(self.index))

    def packed_index(self, columns: torch.Tensor, first: int = 0) -> torch.Tensor:
        """The packed positions of the real columns marked in `columns` ([rows, fed - first] bool, the columns
        from `first` on), in row-major order."""
        if first:
            columns = torch.cat((columns.new_zeros((self.rows, first)), columns), dim=1)
        flat = columns.reshape(-1).nonzero().squeeze(1)
        return flat if self.dense else self.slot.index_select(0, flat)

    def rows_of_tokens(self) -> torch.Tensor:
        """The row of each packed token."""
        flat = torch.arange(self.rows * self.fed) if self.dense else self.index
        return flat // self.fed

    def pack(self, flat: torch.Tensor) -> torch.Tensor:
        return flat if self.dense else flat.index_select(0, self.index)  # ~2× `flat[self.index]`

    def unpack(self, packed: torch.Tensor) -> torch.Tensor:
        """[tokens, heads, dim] → [rows, heads, fed, dim], zeros in padding columns."""
        if not self.dense:
            packed = packed.new_zeros((self.rows * self.fed, *packed.shape[1:])).index_copy_(0, self.index, packed)
        return packed.view(self.rows, self.fed, *packed.shape[1:]).transpose(1, 2)


class ModelForward:
    """The engine's forward pass: logits of the last `keep` columns for rows on `row_adapters`. The lean
    forward unless the rows mix adapters (peft's path) or `kind` is "transformers". Worker thread only."""

    def __init__(self, adapters: AdapterSet, kind: ForwardKind, bf16_threads: int = 0) -> None:
        self._adapters = adapters
        self.lean = (LeanForward(adapters.weights, bf16_threads) if kind == "lean" and supports(adapters.weights)
                     else None)

    def __call__(self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
                 keep: int, row_adapters: list[str | None]) -> torch.Tensor:
        return self.step(input_ids, mask, positions, cache, keep, row_adapters).logits

    def step(self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
             keep: int, row_adapters: list[str | None], few: torch.Tensor | None = None) -> StepLogits:
        """`few`: columns the lean forward may leave unprojected (`LeanForward.step`); transformers' projects all."""
        if self.lean is not None:
            computable, lora = self._adapters.lean_rows(row_adapters)
            if computable:
                return self.lean.step(input_ids, mask, positions, cache, keep, lora, self._adapters.merged is None,
                                      few)
        extra = self._adapters.prepare(row_adapters)
        return StepLogits(self._adapters.model(
            input_ids=input_ids, attention_mask=mask, position_ids=positions, past_key_values=cache,
            use_cache=True, logits_to_keep=keep, **extra,
        ).logits)


def _base(module: Any) -> Any:
    return getattr(module, "base_layer", module)
