"""The tensor table of a GGUF file, read directly: the `gguf` package's reader also builds every metadata
value (the tokenizer's ~100,000 strings) as numpy views, 2.3 s of each start; this skips them in ~0.1 s.

Format (GGUF v2/v3, little-endian): magic, version, tensor count, metadata count; the metadata (key, type,
value); per tensor its name, dimensions, type and offset; the data, aligned to `general.alignment` (32).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

GGML_TYPES = {0: "f32", 1: "f16", 2: "q4_0", 3: "q4_1", 8: "q8_0"}  # the types this engine meets by name
BLOCK = {"q4_0": (32, 18), "q4_1": (32, 20), "q8_0": (32, 34), "f32": (1, 4), "f16": (1, 2)}  # weights, bytes
_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


class GGUFFormatError(ValueError):
    """Not a GGUF file this reader understands."""


@dataclass(frozen=True)
class GGUFTensor:
    name: str
    kind: str  # "q4_1", "q8_0", ... ("type-N" for a type not named here)
    shape: tuple[int, ...]  # GGUF order: the row length first
    data: np.ndarray  # [rows, bytes a row], uint8, memory-mapped


def read_tensors(path: Path) -> dict[str, GGUFTensor]:
    """Every tensor of the file, by name, over one read-only memory map."""
    try:
        return _read(path)
    except struct.error as exc:  # a read past the end of the buffer
        raise GGUFFormatError(f"{path} is cut short: {exc}") from exc


def _read(path: Path) -> dict[str, GGUFTensor]:
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    buffer = memoryview(raw)
    if bytes(buffer[:4]) != b"GGUF":
        raise GGUFFormatError(f"{path} is not a GGUF file")
    version, tensor_count, kv_count = struct.unpack_from("<IQQ", buffer, 4)
    if version not in (2, 3):
        raise GGUFFormatError(f"{path}: GGUF version {version} (this reader knows 2 and 3)")
    at = 24
    alignment = 32
    for _ in range(kv_count):
        key, at = _string(buffer, at)
        (kind,), at = struct.unpack_from("<I", buffer, at), at + 4
        if key == "general.alignment" and kind == 4:
            (alignment,) = struct.unpack_from("<I", buffer, at)
        at = _skip_value(buffer, at, kind)
    infos = []
    for _ in range(tensor_count):
        name, at = _string(buffer, at)
        (dims,), at = struct.unpack_from("<I", buffer, at), at + 4
        shape = struct.unpack_from(f"<{dims}Q", buffer, at)
        at += 8 * dims
        type_id, offset = struct.unpack_from("<IQ", buffer, at)
        at += 12
        infos.append((name, GGML_TYPES.get(type_id, f"type-{type_id}"), tuple(int(d) for d in shape), offset))
    start = -(-at // alignment) * alignment
    tensors = {}
    for name, kind, shape, offset in infos:
        if kind not in BLOCK:
            tensors[name] = GGUFTensor(name, kind, shape, raw[:0].reshape(0, 0))
            continue
        weights, size = BLOCK[kind]
        rows = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
        row_bytes = shape[0] // weights * size
        first = start + offset
        if first + rows * row_bytes > len(raw):
            raise GGUFFormatError(f"{path}: tensor {name} runs past the end of the file")
        tensors[name] = GGUFTensor(name, kind, shape, raw[first : first + rows * row_bytes].reshape(rows, row_bytes))
    return tensors


def _string(buffer: memoryview, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", buffer, at)
    return bytes(buffer[at + 8 : at + 8 + length]).decode("utf-8", errors="replace"), at + 8 + length


def _skip_value(buffer: memoryview, at: int, kind: int) -> int:
    if kind in _SCALAR:
        return at + struct.calcsize("<" + _SCALAR[kind])
    if kind == _STRING:
        (length,) = struct.unpack_from("<Q", buffer, at)
        return at + 8 + length
    if kind == _ARRAY:
        item, count = struct.unpack_from("<IQ", buffer, at)
        at += 12
        if item in _SCALAR:
            return at + count * struct.calcsize("<" + _SCALAR[item])
        if item == _STRING:
            for _ in range(count):
                (length,) = struct.unpack_from("<Q", buffer, at)
                at += 8 + length
            return at
        for _ in range(count):  # arrays of arrays
            at = _skip_value(buffer, at, item)
        return at
    raise GGUFFormatError(f"unknown GGUF metadata type {kind}")
