"""manifest.json: what an eval directory holds, so a resumed eval is the same eval.

Resuming with other questions, seed, split, adapter, model or agent settings would mix two evals' results in
one file; that is refused with the field that differs. More systems or a larger --limit are
fine: the selection for a larger limit starts with the smaller one.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

MANIFEST_FILE = "manifest.json"
# Fields that must match for results to be comparable within one directory.
_MUST_MATCH = ("questions_sha256", "corpus_sha256", "split", "seed", "adapter", "model", "temperature",
               "agent_changes")


class EvalMismatch(ValueError):
    """The out dir holds another eval."""


def file_sha256(path: Path | None) -> str | None:
    if path is None:
        return None
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class EvalManifest(BaseModel):
    eval_id: str = Field(default_factory=lambda: f"eval-{uuid.uuid4().hex[:10]}")
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    questions_path: str | None = None
    questions_sha256: str | None = None
    corpus_path: str | None = None
    corpus_sha256: str | None = None
    split: str | None = None
    limit: int | None = None
    seed: int = 0
    systems: list[str] = Field(default_factory=list)
    adapter: str | None = None
    model: str = ""
    temperature: float = 0.0
    question_ids: list[str] = Field(default_factory=list)
    # The agent settings that differ from their defaults (dotted names), e.g. one set by an environment variable:
    # an eval is read with the settings it ran under.
    agent_changes: dict[str, Any] = Field(default_factory=dict)

    def save(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / MANIFEST_FILE).write_text(self.model_dump_json(indent=2), encoding="utf-8")


def changed_settings(settings: BaseModel, defaults: BaseModel, prefix: str = "") -> dict[str, Any]:
    """The fields of `settings` that differ from `defaults`, nested models flattened to dotted names."""
    out: dict[str, Any] = {}
    for name in type(settings).model_fields:
        value, default = getattr(settings, name), getattr(defaults, name)
        if isinstance(value, BaseModel) and isinstance(default, BaseModel):
            out |= changed_settings(value, default, f"{prefix}{name}.")
        elif value != default:
            out[f"{prefix}{name}"] = value.as_posix() if isinstance(value, Path) else value
    return out


def load_manifest(out_dir: Path) -> EvalManifest | None:
    path = Path(out_dir) / MANIFEST_FILE
    if not path.is_file():
        return None
    return EvalManifest.model_validate(json.loads(path.read_text(encoding="utf-8")))


def open_manifest(out_dir: Path, wanted: EvalManifest) -> EvalManifest:
    """The manifest to run under: the existing one (extended) when compatible, else `wanted`."""
    existing = load_manifest(out_dir)
    if existing is None:
        wanted.save(out_dir)
        return wanted
    for name in _MUST_MATCH:
        old, new = getattr(existing, name), getattr(wanted, name)
        if old != new:
            raise EvalMismatch(
                f"{out_dir} holds eval {existing.eval_id} run with a different {name} ({old!r} vs {new!r}); "
                "use another --out"
            )
    merged = existing.model_copy(update={
        "systems": list(dict.fromkeys([*existing.systems, *wanted.systems])),
        "question_ids": list(dict.fromkeys([*existing.question_ids, *wanted.question_ids])),
        "limit": wanted.limit,
    })
    merged.save(out_dir)
    return merged
