"""Reading the settings sources safely: the TOML file's bytes and the DEEPRESEARCH_* environment.

pydantic-settings silently ignores an environment variable whose top-level name is no setting, and
raises a multi-line error (naming only the top-level field) when a list or table value is not JSON.
Both are checked here first, so every bad input becomes one SettingsError line naming the variable.
"""

from __future__ import annotations

import json
import tomllib
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel


class SettingsError(ValueError):
    """A bad setting; the message is one line naming the key and where it came from."""


def read_toml(path: Path) -> dict[str, Any]:
    """The parsed config file, or SettingsError with one line (unreadable, not UTF-8, not TOML)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path}: not valid TOML: {_one_line(str(exc))}") from None


def check_environment(model: type[BaseModel], environ: Mapping[str, str], prefix: str, ignore: set[str]) -> None:
    """Every `prefix`* variable must name a setting, and a list/table setting's value must be JSON."""
    for name, value in sorted(environ.items()):
        if not name.upper().startswith(prefix) or name.upper() in ignore:
            continue
        loc = name[len(prefix):].lower().split("__")
        key = ".".join(loc)
        annotation = _annotation_at(model, loc)
        if annotation is None:
            raise SettingsError(f"unknown setting '{key}' (environment variable {name})")
        if _is_complex(annotation):
            try:
                json.loads(value)
            except ValueError:
                raise SettingsError(
                    f"bad setting '{key}' (environment variable {name}): a list or table must be written as "
                    """JSON, e.g. '["a", "b"]' or '{"k": 1}'"""
                ) from None


def _annotation_at(model: type[BaseModel], loc: list[str]) -> Any:
    """The type annotation of the setting at `loc`, or None when no setting lives there."""
    annotation: Any = model
    for part in loc:
        target = _model_in(annotation)
        if target is None:
            # Below a table setting (e.g. min_interval_s__ddg) any key is the table's own.
            return annotation if _dict_in(annotation) and part else None
        field = target.model_fields.get(part)
        if not part or field is None:
            return None
        annotation = field.annotation
    return annotation


def _members(annotation: Any) -> tuple[Any, ...]:
    """The alternatives of a union (X | None), or the annotation itself."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return member
    return None


def _dict_in(annotation: Any) -> bool:
    return any(typing.get_origin(m) in (dict, Mapping) or m is dict for m in _members(annotation))


def _is_complex(annotation: Any) -> bool:
    """Whether pydantic-settings parses this setting's environment value as JSON (and fails if it is not).

    Unions (`list[str] | None`) are left out: for them a non-JSON value reaches validation, which
    already reports it as one line.
    """
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return False
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, BaseModel):
        return True
    return origin in (list, set, frozenset, tuple, dict)


def _one_line(text: str) -> str:
    return " ".join(text.split())
