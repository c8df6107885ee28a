"""LoRA adapters for the embedded engine: loaded and unloaded by name, chosen per row.

The adapter format is peft's `save_pretrained` directory (adapter_config.json + weights), which is
what the trainer writes. Several adapters can be loaded at once. Each forward pass arranges the LoRA
layers for the rows it serves (`prepare`):
- every row on one adapter (the usual case: the served adapter, a rollout group): that adapter is merged
  into the weights, so decoding costs what the base model costs (peft's unmerged path is ~8 % slower and
  its per-row path ~30 % slower at batch 8 on a CPU);
- no row on an adapter: the LoRA layers are switched off;
- a mix: unmerged, through peft's mixed-batch `adapter_names` argument ("__base__" = no adapter).
Merges change only with the batch's make-up, not per step. With no adapter loaded the plain model runs.
Only the engine's worker thread calls `load`/`unload`/`prepare`, between decode steps.

The set starts from the weights the lean forward reads (`weights`: embedded_llama.py's LlamaWeights, or a
transformers model). transformers' model, which peft wraps, is built on the first adapter load or the
first pass through transformers (`model`), on the same parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .base import ModelError
from .embedded_llama import LlamaWeights

BASE_ROW = "__base__"


class AdapterSet:
    def __init__(self, weights: torch.nn.Module) -> None:
        self.weights = weights
        self._base: torch.nn.Module | None = None if isinstance(weights, LlamaWeights) else weights
        self._peft: Any | None = None  # peft.PeftModel once an adapter is loaded
        self._paths: dict[str, Path] = {}
        self._merged: str | None = None  # adapter whose weights are currently added into the base weights
        self._disabled = False  # LoRA layers switched off (every row on the base model)

    @property
    def model(self) -> torch.nn.Module:
        """transformers' model (peft's while an adapter is loaded); built on first use."""
        return self._peft if self._peft is not None else self._transformers_base()

    def _transformers_base(self) -> torch.nn.Module:
        if self._base is None:
            assert isinstance(self.weights, LlamaWeights)
            self._base = self.weights.transformers()
        return self._base

    def names(self) -> list[str]:
        return sorted(self._paths)

    def path(self, name: str) -> Path | None:
        return self._paths.get(name)

    def load(self, name: str, path: Path) -> None:
        """Load (or replace) adapter `name` from a peft adapter directory."""
        path = Path(path)
        if not (path / "adapter_config.json").is_file():
            raise ModelError(f"{path} is not a LoRA adapter directory (no adapter_config.json)")
        if name == BASE_ROW or not name.strip():
            raise ModelError(f"invalid adapter name {name!r}")
        if name in self._paths:
            self.unload(name)
        self._arrange(merged=None, disabled=False)  # load into plain LoRA layers, never into merged weights
        from peft import PeftModel

        try:
            if self._peft is None:
                base = self._transformers_base()
                self._peft = PeftModel.from_pretrained(base, str(path), adapter_name=name, is_trainable=False)
            else:
                self._peft.load_adapter(str(path), adapter_name=name, is_trainable=False)
        except (ValueError, OSError, RuntimeError, KeyError) as exc:
            if self._peft is not None and not self._paths:
                self._base = self._peft.unload()  # undo a half-done first wrap
                self._peft = None
            raise ModelError(f"cannot load adapter {name!r} from {path}: {exc}".splitlines()[0]) from exc
        self._peft.eval()
        self._paths[name] = path

    def unload(self, name: str) -> None:
        if name not in self._paths:
            raise ModelError(f"unknown adapter {name!r}; loaded: {', '.join(self.names()) or 'none'}")
        assert self._peft is not None
        self._arrange(merged=None, disabled=False)  # a merged delta must leave the weights with its adapter
        del self._paths[name]
        if self._paths:
            self._peft.delete_adapter(name)
        else:
            # Last adapter gone: strip the LoRA layers so the base model runs at full speed again.
            self._base = self._peft.unload()
            self._peft = None

    def prepare(self, row_adapters: list[str | None]) -> dict[str, Any]:
        """Arrange the LoRA layers for a batch whose rows use `row_adapters`; return extra forward arguments."""
        if self._peft is None:
            return {}
        wanted = set(row_adapters)
        if wanted == {None}:
            self._arrange(merged=None, disabled=True)
            return {}
        if len(wanted) == 1:
            self._arrange(merged=row_adapters[0], disabled=False)
            return {}
        self._arrange(merged=None, disabled=False)
        return {"adapter_names": [a if a is not None else BASE_ROW for a in row_adapters]}

    def _arrange(self, merged: str | None, disabled: bool) -> None:
        if self._peft is None:
            return
        tuner = self._peft.base_model
        if self._merged is not None and self._merged != merged:
            tuner.unmerge_adapter()
            self._merged = None
        if self._disabled != disabled:
            (tuner.disable_adapter_layers if disabled else tuner.enable_adapter_layers)()
            self._disabled = disabled
        if merged is not None and self._merged != merged:
            tuner.merge_adapter([merged])
            self._merged = merged
