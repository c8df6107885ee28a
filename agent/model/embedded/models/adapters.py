"""LoRA adapters for the embedded engine: loaded and unloaded by name, chosen per row.

The adapter format is peft's `save_pretrained` directory (adapter_config.json + weights), which is
what the trainer writes. Several adapters can be loaded at once.

With the lean forward (layers/forward.py on LlamaWeights), a plain LoRA adapter is read straight from its
files (loaders/lora_file.py): no peft, no transformers model, a fraction of a second. The lean forward adds
each row's LoRA products itself (`lean_rows`), for rows on one adapter as for a mix, so the base weights stay
the file's and few-row products keep reading the packaged GGUF's blocks (merging an adapter into the weights
would move every product to fp32, and switching between base and adapter batches would merge and unmerge).

peft holds the rest: adapters that are not plain LoRA, and every adapter once the transformers forward needs
it (`prepare`, `model`: `forward="transformers"`, or the lean forward's fallback), loaded there on demand.
There, rows on one adapter get it merged into the weights (peft's unmerged path is ~8 % slower and its
per-row path ~30 % slower at batch 8 on a CPU); no row on an adapter switches the LoRA layers off; a mix
goes through peft's mixed-batch `adapter_names` argument ("__base__" = no adapter). Merges change only with
the batch's make-up, not per step. With no adapter loaded the plain model runs. Only the engine's worker
thread calls `load`/`unload`/`prepare`/`lean_rows`, between decode steps.

The set starts from the weights the lean forward reads (`weights`: llama.py's LlamaWeights, or a
transformers model). transformers' model, which peft wraps, is built on the first peft load or the first
pass through transformers (`model`), on the same parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from ...base import ModelError
from ...lora_targets import LORA_TARGET_MODULES
from ..loaders.lora_file import LayerLora, read_plain_lora
from .llama import LlamaWeights

BASE_ROW = "__base__"
RowGroups = list[tuple[list[int], list[LayerLora]]]  # per adapter of a batch: its rows, its products per layer


class AdapterSet:
    def __init__(self, weights: torch.nn.Module) -> None:
        self.weights = weights
        self._base: torch.nn.Module | None = None if isinstance(weights, LlamaWeights) else weights
        self._peft: Any | None = None  # peft.PeftModel once an adapter is loaded
        self._paths: dict[str, Path] = {}
        self._merged: str | None = None  # adapter whose weights are currently added into the base weights
        self._disabled = False  # LoRA layers switched off (every row on the base model)
        self._lean: dict[str, list[LayerLora] | None] = {}  # an adapter's products for the lean forward
        self._file_only: set[str] = set()  # read from their files for the lean forward, not (yet) in peft

    @property
    def model(self) -> torch.nn.Module:
        """transformers' model (peft's while an adapter is loaded); built on first use."""
        return self._peft if self._peft is not None else self._transformers_base()

    def _transformers_base(self) -> torch.nn.Module:
        if self._base is None:
            assert isinstance(self.weights, LlamaWeights)
            self._base = self.weights.transformers()
        return self._base

    @property
    def merged(self) -> str | None:
        """The adapter currently added into the base weights, if any."""
        return self._merged

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
        self._lean.pop(name, None)
        if isinstance(self.weights, LlamaWeights):
            products = read_plain_lora(path, self.weights.model.layers)
            if products is not None:
                self._lean[name] = products
                self._file_only.add(name)
                self._paths[name] = path
                return
        self._load_into_peft(name, path)

    def _load_into_peft(self, name: str, path: Path) -> None:
        self._arrange(merged=None, disabled=False)  # load into plain LoRA layers, never into merged weights
        from peft import PeftModel

        try:
            if self._peft is None:
                base = self._transformers_base()
                self._peft = PeftModel.from_pretrained(base, str(path), adapter_name=name, is_trainable=False)
            else:
                self._peft.load_adapter(str(path), adapter_name=name, is_trainable=False)
        except (ValueError, OSError, RuntimeError, KeyError) as exc:
            if self._peft is not None and not self._in_peft():
                self._base = self._peft.unload()  # undo a half-done first wrap
                self._peft = None
            raise ModelError(f"cannot load adapter {name!r} from {path}: {exc}".splitlines()[0]) from exc
        self._peft.eval()
        self._paths[name] = path
        self._file_only.discard(name)

    def _in_peft(self) -> list[str]:
        return [n for n in self._paths if n not in self._file_only]

    def _into_peft(self, names: set[str | None]) -> None:
        """Load into peft the adapters among `names` that were read only for the lean forward."""
        for name in sorted(n for n in names if n in self._file_only):
            self._load_into_peft(name, self._paths[name])

    def unload(self, name: str) -> None:
        if name not in self._paths:
            raise ModelError(f"unknown adapter {name!r}; loaded: {', '.join(self.names()) or 'none'}")
        if name in self._file_only:  # never reached peft: nothing to strip from the model
            self._file_only.discard(name)
            del self._paths[name]
            self._lean.pop(name, None)
            return
        assert self._peft is not None
        self._arrange(merged=None, disabled=False)  # a merged delta must leave the weights with its adapter
        del self._paths[name]
        self._lean.pop(name, None)
        if self._in_peft():
            self._peft.delete_adapter(name)
        else:
            # Last adapter gone: strip the LoRA layers so the base model runs at full speed again.
            self._base = self._peft.unload()
            self._peft = None

    def prepare(self, row_adapters: list[str | None]) -> dict[str, Any]:
        """Arrange the LoRA layers for a batch whose rows use `row_adapters` on transformers' forward; return
        extra forward arguments."""
        wanted = set(row_adapters)
        self._into_peft(wanted)
        if self._peft is None:
            return {}
        if wanted == {None}:
            self._arrange(merged=None, disabled=True)
            return {}
        if len(wanted) == 1:
            self._arrange(merged=row_adapters[0], disabled=False)
            return {}
        self._arrange(merged=None, disabled=False)
        return {"adapter_names": [a if a is not None else BASE_ROW for a in row_adapters]}

    def lean_rows(self, row_adapters: list[str | None]) -> tuple[bool, RowGroups]:
        """Arrange the weights for the lean forward: (False, []) when it cannot compute these rows (a mix with
        an adapter that is not plain LoRA on the projections: use `prepare` and peft's path); else True and the
        LoRA products it must add per adapter's rows, none when no row has an adapter or one is merged (a
        batch all on one adapter that is not plain LoRA: peft merges it into the weights)."""
        wanted = set(row_adapters)
        groups: RowGroups = []
        for name in sorted(wanted - {None}):
            if name not in self._lean:
                self._lean[name] = self._products(name)
            layers = self._lean[name]
            if layers is None:
                if len(wanted) == 1:
                    self.prepare(row_adapters)
                    return True, []
                return False, []
            groups.append(([i for i, a in enumerate(row_adapters) if a == name], layers))
        self._arrange(merged=None, disabled=self._disabled)  # the file's weights: nothing merged into them
        return True, groups

    def _products(self, name: str) -> list[LayerLora] | None:
        """Adapter `name`'s (A, s·B) per layer and projection, from peft's layers; None unless it is plain LoRA
        (no DoRA or other variant, no LoRA bias; dropout is off at inference) on the decoder layers' projections
        only."""
        if self._peft is None:
            return None
        layers: dict[int, LayerLora] = {}
        for path, module in self._peft.named_modules():
            if name not in getattr(module, "lora_A", {}):
                continue
            parts = path.split(".")
            plain = name not in getattr(module, "lora_variant", {})
            if "layers" not in parts or parts[-1] not in LORA_TARGET_MODULES or not plain:
                return None
            b = module.lora_B[name]
            if b.bias is not None:
                return None
            index = int(parts[parts.index("layers") + 1])
            scaled = (b.weight * module.scaling[name]).detach().contiguous()
            layers.setdefault(index, {})[parts[-1]] = (module.lora_A[name].weight.detach(), scaled)
        count = len(self._peft.base_model.model.model.layers)
        return [layers.get(i, {}) for i in range(count)]

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
