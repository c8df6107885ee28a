"""The adapter registry: data_dir/adapters/NAME/ (peft files + metadata.json) and registry.json.

registry.json holds which adapter is current (served; None = the base model) and the stack of
previous currents, so `rollback` returns to exactly what was served before, and a log of every
change. Writes go to a temporary file renamed into place: a crash never leaves half a registry.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deepresearch.agent.model.policy import AdapterChoice
from pydantic import BaseModel, Field

REGISTRY_FILE = "registry.json"
METADATA_FILE = "metadata.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def read_metadata(adapter_dir: Path) -> dict[str, Any]:
    """An adapter folder's metadata.json ({} when it has none)."""
    file = Path(adapter_dir) / METADATA_FILE
    return json.loads(file.read_text()) if file.is_file() else {}


def adapter_choice(name: str, adapter_dir: Path) -> AdapterChoice:
    """Adapter `name` (its files in `adapter_dir`), scoped to the roles it was trained for (its metadata's
    `roles`), which are the roles it answers for; unscoped = every role (adapters trained on all roles,
    or from elsewhere, or unreadable metadata)."""
    try:
        roles = read_metadata(adapter_dir).get("roles")
    except (OSError, ValueError):
        roles = None
    return AdapterChoice.named(name, frozenset(roles) if roles else None)


class RegistryError(ValueError):
    """A bad adapter name or registry operation (one line, for the CLI)."""


class RegistryState(BaseModel):
    current: str | None = None
    stack: list[str | None] = Field(default_factory=list, description="earlier currents, oldest first")
    log: list[dict[str, Any]] = Field(default_factory=list)


class AdapterInfo(BaseModel):
    name: str
    path: Path
    created_at: str | None = None
    step: int | None = None
    round: int | None = None
    reward_mean: float | None = None
    eval: dict[str, Any] | None = None
    origin: str | None = Field(None, description="where a shipped adapter came from (the starter's metadata)")
    current: bool = False


class AdapterRegistry:
    def __init__(self, root: Path):
        self.root = Path(root)

    # --- adapters on disk -------------------------------------------------------------------
    def path(self, name: str) -> Path:
        if not _NAME.match(name):
            raise RegistryError(f"bad adapter name {name!r}: use letters, digits, '.', '_' or '-'")
        return self.root / name

    def exists(self, name: str) -> bool:
        return _NAME.match(name) is not None and (self.root / name / "adapter_config.json").is_file()

    def metadata(self, name: str) -> dict[str, Any]:
        return read_metadata(self.path(name))

    def choice(self, name: str | None) -> AdapterChoice:
        """Adapter `name`, scoped as it was trained; None = whatever the model serves (its active one)."""
        return adapter_choice(name, self.path(name)) if name else AdapterChoice.active()

    def update_metadata(self, name: str, **fields: Any) -> None:
        meta = {**self.metadata(name), **fields}
        _atomic_write(self.path(name) / METADATA_FILE, json.dumps(meta, indent=2, default=str))

    def remove(self, name: str) -> None:
        """Delete an adapter nobody serves (e.g. one a killed training round left unpublished)."""
        if name == self.current:
            raise RegistryError(f"{name} is the current adapter: `adapters use` another one first")
        shutil.rmtree(self.path(name))

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        found = [p.name for p in self.root.iterdir() if (p / "adapter_config.json").is_file()]
        return sorted(found, key=lambda n: (str(self.metadata(n).get("created_at", "")), n))

    def list(self) -> list[AdapterInfo]:
        current = self.state().current
        out = []
        for name in self.names():
            meta = self.metadata(name)
            out.append(AdapterInfo(
                name=name, path=self.root / name, created_at=meta.get("created_at"), step=meta.get("step"),
                round=meta.get("round"), reward_mean=(meta.get("rewards") or {}).get("reward_mean"),
                eval=meta.get("eval"), origin=meta.get("origin"), current=name == current,
            ))
        return out

    def next_name(self, prefix: str) -> str:
        pattern = re.compile(rf"^{re.escape(prefix)}-(\d+)$")
        numbers = [int(m.group(1)) for n in self.names() if (m := pattern.match(n))]
        return f"{prefix}-{max(numbers, default=0) + 1:04d}"

    # --- what is served ---------------------------------------------------------------------
    def state(self) -> RegistryState:
        file = self.root / REGISTRY_FILE
        if not file.is_file():
            return RegistryState()
        try:
            return RegistryState.model_validate_json(file.read_text())
        except ValueError as exc:
            raise RegistryError(f"{file} is corrupt: {str(exc).splitlines()[0]}") from None

    @property
    def current(self) -> str | None:
        return self.state().current

    def set_current(self, name: str | None, action: str = "use") -> RegistryState:
        """Serve `name` (None = base model); the previous current goes on the rollback stack."""
        if name is not None and not self.exists(name):
            known = ", ".join(self.names()) or "none yet"
            raise RegistryError(f"no adapter named {name!r} (adapters: {known})")
        state = self.state()
        if state.current != name:
            state.stack.append(state.current)
        state.current = name
        state.log.append({"at": _now(), "action": action, "current": name})
        self._save(state)
        return state

    def rollback(self) -> RegistryState:
        """Serve what was served before the current adapter."""
        state = self.state()
        if not state.stack:
            raise RegistryError("nothing to roll back to: no earlier adapter was served")
        previous = state.stack.pop()
        while previous is not None and not self.exists(previous) and state.stack:
            previous = state.stack.pop()  # skip adapters deleted from disk since
        if previous is not None and not self.exists(previous):
            previous = None
        state.log.append({"at": _now(), "action": "rollback", "from": state.current, "current": previous})
        state.current = previous
        self._save(state)
        return state

    def _save(self, state: RegistryState) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.root / REGISTRY_FILE, state.model_dump_json(indent=2))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
