"""LoRA adapters for the embedded engine: loaded and unloaded by name, chosen per row.

The adapter format is peft's `save_pretrained` directory (adapter_config.json + weights), which is
what the trainer writes. Several adapters can be loaded at once; one forward pass serves rows with
different adapters through peft's mixed-batch `adapter_names` argument ("__base__" = no adapter).
With no adapter loaded the plain model runs, so the common case pays nothing for LoRA.
Only the engine's worker thread calls `load`/`unload`, between decode steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .base import ModelError

BASE_ROW = "__base__"


class AdapterSet:
    def __init__(self, base_model: torch.nn.Module) -> None:
        self._base = base_model
        self._peft: Any | None = None  # peft.PeftModel once an adapter is loaded
        self._paths: dict[str, Path] = {}

    @property
    def model(self) -> torch.nn.Module:
        return self._peft if self._peft is not None else self._base

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
        from peft import PeftModel

        try:
            if self._peft is None:
                self._peft = PeftModel.from_pretrained(self._base, str(path), adapter_name=name, is_trainable=False)
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
        del self._paths[name]
        assert self._peft is not None
        if self._paths:
            self._peft.delete_adapter(name)
        else:
            # Last adapter gone: strip the LoRA layers so the base model runs at full speed again.
            self._base = self._peft.unload()
            self._peft = None

    def forward_kwargs(self, row_adapters: list[str | None]) -> dict[str, Any]:
        """Extra forward arguments selecting each row's adapter."""
        if self._peft is None:
            return {}
        return {"adapter_names": [a if a is not None else BASE_ROW for a in row_adapters]}
