"""Products on the packaged GGUF's blocks (embedded/kernels/: gguf_blocks.py, build.py, gguf_products.c): the
file's tensor table, the kernel against numpy on the same weights (AVX-512 and portable builds), the real model's
blocks against its loaded fp32 weights, the lean forward and the engine with and without them, and every way they
are refused."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from deepresearch.agent.model.embedded.kernels.build import KernelError, build_kernel
from deepresearch.agent.model.embedded.kernels.gguf_blocks import (
    BLOCK_BYTES,
    GGUF_MAX_ROWS,
    BlockProduct,
    BlockTensor,
    load_gguf_blocks,
    packaged_blocks,
)
from deepresearch.agent.model.embedded.loaders.gguf_file import GGUFFormatError, read_tensors
from deepresearch.agent.model.embedded.loaders.packaged_model import find_gguf

from .test_embedded_forward import real_columns, run
from .test_prefix_cache import recorded_calls, same


def random_blocks(kind: str, rows: int, columns: int, rng: np.random.Generator) -> np.ndarray:
    """GGUF blocks with random scales (negative, tiny and subnormal ones included) and random quants."""
    blocks = rng.integers(0, 256, (rows, columns // 32, BLOCK_BYTES[kind]), dtype=np.uint8)
    scales = (rng.standard_normal((rows, columns // 32, 2)) * 0.05).astype(np.float16)
    scales[0, 0] = [np.float16(3e-7), np.float16(-2e-6)]  # subnormal halves
    blocks[:, :, :2] = scales[:, :, :1].view(np.uint8)
    if kind == "q4_1":
        blocks[:, :, 2:4] = scales[:, :, 1:].view(np.uint8)
    return blocks.reshape(rows, -1)


@pytest.mark.parametrize("flags", [(), ("-mno-avx512f",), ("-mno-avx512f", "-mno-f16c")],
                         ids=["native", "portable", "portable-no-f16c"])
def test_block_products_equal_numpy_products_of_the_same_weights(tmp_path: Path, flags: tuple[str, ...]):
    kernel = build_kernel(tmp_path, flags)
    rng = np.random.default_rng(0)
    order = rng.permutation(48).astype(np.int32)
    parts = [BlockTensor("q4_1", random_blocks("q4_1", 48, 96, rng), 96, order),
             BlockTensor("q8_0", random_blocks("q8_0", 20, 96, rng), 96)]
    product = BlockProduct(parts, kernel)
    weights = product.dequantize(np.arange(product.outputs))
    assert weights.shape == (68, 96) and np.isfinite(weights).all()
    with pytest.raises(ValueError, match=r"float32 \[rows, 96\]"):
        product(np.zeros((2, 95), dtype=np.float32))  # the kernel would read past the rows
    with pytest.raises(ValueError, match="float64"):
        product(np.zeros((2, 96)))
    for rows in (1, 2, 3, 4, 5, 7, 9, 13):
        x = rng.standard_normal((rows, 96)).astype(np.float32)
        want = x.astype(np.float64) @ weights.T.astype(np.float64)
        got = product(x)
        assert got.shape == (rows, 68)
        assert np.allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max()), np.abs(got - want).max()


def test_products_called_from_two_threads_at_once_stay_right(tmp_path: Path):
    from concurrent.futures import ThreadPoolExecutor

    kernel = build_kernel(tmp_path)
    assert kernel.gguf_set_threads(2) == 2  # the caller and a helper share each large product
    rng = np.random.default_rng(1)
    product = BlockProduct([BlockTensor("q4_1", random_blocks("q4_1", 512, 256, rng), 256)], kernel)
    inputs = [rng.standard_normal((rows, 256)).astype(np.float32) for rows in (1, 3)]
    alone = [product(x) for x in inputs]

    def repeat(i: int) -> bool:  # two engines' threads decoding at once: one shares the helper, one works alone
        return all(np.array_equal(product(inputs[i]), alone[i]) for _ in range(300))

    with ThreadPoolExecutor(2) as pool:
        assert all(pool.map(repeat, [0, 1]))
    assert kernel.gguf_set_threads(1) == 1


def test_the_file_reader_gives_the_tensor_table_of_the_gguf_package():
    import gguf

    path = find_gguf()
    ours = read_tensors(path)
    theirs = gguf.GGUFReader(path).tensors
    assert sorted(ours) == sorted(t.name for t in theirs)
    for tensor in theirs:
        mine = ours[tensor.name]
        assert mine.kind == tensor.tensor_type.name.lower()
        assert mine.shape == tuple(int(d) for d in tensor.shape)
        if mine.kind in BLOCK_BYTES:
            assert np.array_equal(mine.data, tensor.data)


def test_a_file_that_is_not_gguf_or_is_cut_short_is_refused(tmp_path: Path):
    other = tmp_path / "model.bin"
    other.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(GGUFFormatError, match="not a GGUF file"):
        read_tensors(other)
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(find_gguf().read_bytes()[:4096])
    with pytest.raises(GGUFFormatError, match="cut short"):
        read_tensors(cut)
    with pytest.raises(KernelError, match="cannot read"):
        load_gguf_blocks(cut, object(), tmp_path / "kernels")


@pytest.fixture(scope="module")
def file_weights(model_dir: Path):
    """The real model's fp32 weights with the GGUF's blocks beside them, as the engine loads them."""
    from deepresearch.agent.model.embedded.models.llama import LlamaWeights

    weights = LlamaWeights.load(model_dir)
    weights.gguf_blocks = packaged_blocks(model_dir, weights.config)
    assert weights.gguf_blocks is not None
    return weights


def counting_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = BlockProduct.__call__

    def counted(self: BlockProduct, x: np.ndarray) -> np.ndarray:
        calls.append(len(x))
        return original(self, x)

    monkeypatch.setattr(BlockProduct, "__call__", counted)
    return calls


@torch.inference_mode()
def test_the_lean_forward_on_the_blocks_gives_the_fp32_logits(file_weights, monkeypatch):
    from deepresearch.agent.model.embedded.layers.forward import LeanForward

    lean = LeanForward(file_weights)
    assert lean.blocks  # every weight matched the file's blocks exactly
    calls = counting_blocks(monkeypatch)
    on_blocks = run(lean, file_weights)
    assert calls and max(calls) <= GGUF_MAX_ROWS < 32  # the decode steps; the 32-token prefill stayed fp32
    calls.clear()
    fp32 = run(lambda *a: lean(*a, file_weights=False), file_weights)
    assert not calls
    for want, got in zip(real_columns(fp32), real_columns(on_blocks), strict=True):
        assert torch.allclose(want, got, atol=1e-3), float((want - got).abs().max())
        assert torch.equal(want.argmax(-1), got.argmax(-1))


@torch.inference_mode()
def test_weights_that_are_not_the_file_s_keep_fp32_products(model_dir, caplog):
    from deepresearch.agent.model.embedded.layers.forward import LeanForward
    from deepresearch.agent.model.embedded.models.llama import LlamaWeights

    weights = LlamaWeights.load(model_dir)
    weights.gguf_blocks = packaged_blocks(model_dir, weights.config)
    weights.model.layers[0].mlp.down_proj.weight[0, 0] += 1.0  # what a fine-tuned checkpoint would differ by
    with caplog.at_level(logging.WARNING):
        lean = LeanForward(weights)
    assert not lean.blocks
    assert "not the loaded weights" in caplog.text


@torch.inference_mode()
def test_a_plain_adapter_keeps_the_blocks_and_a_merged_one_keeps_its_rows_off_them(file_weights, lora_dir, monkeypatch):
    from deepresearch.agent.model.embedded.layers.forward import ModelForward
    from deepresearch.agent.model.embedded.models.adapters import AdapterSet

    adapters = AdapterSet(file_weights)
    forward = ModelForward(adapters, "lean")
    adapters.load("a", lora_dir)
    calls = counting_blocks(monkeypatch)
    try:
        single = run(lambda *a: forward(*a, row_adapters=["a", "a"]), file_weights)
        assert adapters.merged is None and calls  # base products on the blocks, the LoRA products added
        mixed = run(lambda *a: forward(*a, row_adapters=["a", None]), file_weights)
        assert torch.allclose(single[3][0], mixed[3][0], atol=1e-4)  # row 0 is on the adapter either way
        calls.clear()
        adapters.prepare(["a", "a"])  # transformers' path merges it into the weights
        merged = run(lambda *a: forward.lean(*a, [], adapters.merged is None), file_weights)
        assert adapters.merged == "a" and not calls  # the weights are no longer the file's
        assert torch.allclose(single[3][0], merged[3][0], atol=2e-3)
    finally:
        adapters.unload("a")


def test_without_a_compiler_the_products_stay_fp32_and_say_why(model_dir, tmp_path, monkeypatch, caplog):
    from deepresearch.agent.model.embedded.models.llama import LlamaConfig

    monkeypatch.setenv("CC", str(model_dir / "no-such-compiler"))
    with caplog.at_level(logging.WARNING):
        assert packaged_blocks(model_dir, LlamaConfig.read(model_dir)) is None
    assert "stay fp32" in caplog.text and "no-such-compiler" in caplog.text
    monkeypatch.setenv("CC", "false")  # runs, but builds nothing
    with pytest.raises(KernelError, match="false failed: exit status 1"):
        build_kernel(tmp_path)


def test_a_kernel_directory_that_cannot_be_written_is_a_kernel_error(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(KernelError, match="cannot build the kernel in"):
        build_kernel(blocker / "kernels")  # under a file: no directory can be made there


def test_a_build_is_kept_for_the_next_process_and_old_builds_are_pruned(tmp_path: Path):
    from deepresearch.agent.model.embedded.kernels.build import KEPT_BUILDS

    build_kernel(tmp_path)
    first = sorted(tmp_path.glob("gguf_products-*.so"))
    build_kernel(tmp_path)  # the same source, compiler and CPU: loaded, not built again
    assert sorted(tmp_path.glob("gguf_products-*.so")) == first and len(first) == 1
    for chunks in range(2, 2 + KEPT_BUILDS):  # other builds (here: other compiler options)
        build_kernel(tmp_path, (f"-DCHUNKS={chunks}",))
    kept = list(tmp_path.glob("gguf_products-*.so"))
    assert len(kept) == KEPT_BUILDS and first[0] not in kept  # the oldest went first
    assert not list(tmp_path.glob("*.tmp"))


def test_a_model_not_converted_from_the_packaged_gguf_gets_no_blocks(tmp_path: Path):
    assert packaged_blocks(tmp_path, object()) is None


async def test_the_engine_gives_the_same_completions_with_and_without_the_blocks(embedded, model_dir):
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    assert embedded._engine.forward.lean.blocks  # the default
    fp32 = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, gguf_products=False))
    try:
        assert not fp32._engine.forward.lean.blocks
        calls = recorded_calls()
        expected = await fp32.chat_many(calls)
        got = await embedded.chat_many(calls)
        assert all(c.parsed is not None for c in got)
        assert all(same(g, e) for g, e in zip(got, expected, strict=True))
    finally:
        fp32._engine.close()


async def test_the_gguf_products_setting_reaches_the_engine():
    from deepresearch.agent.config import ModelSettings
    from deepresearch.agent.model.factory import build_model

    from .conftest import model_cache_dir

    model = build_model(ModelSettings(gguf_products=False), cache_dir=model_cache_dir())
    try:
        assert model._engine.forward.lean is not None and not model._engine.forward.lean.blocks
    finally:
        await model.close()
