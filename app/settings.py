"""One settings model for the whole app, composed from the models each layer defines for itself.

Precedence, lowest first: defaults < TOML file (~/.config/deepresearch/config.toml or --config)
< DEEPRESEARCH_* environment (nested with "__", e.g. DEEPRESEARCH_MODEL__BASE_URL) < CLI flags.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from deepresearch.agent.config import AgentSettings, ModelSettings
from deepresearch.agent.model.remote.server import VLLMServeSettings
from deepresearch.evals.config import EvalSettings
from deepresearch.tools.config import ToolSettings
from deepresearch.train.config import TrainSettings
from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)
from pydantic_settings import SettingsError as SourceError

from .service.config import ApiSettings
from .settings_sources import SettingsError, check_environment, read_toml

__all__ = ["ENV_PREFIX", "Paths", "Settings", "SettingsError", "get_settings", "load_settings", "set_settings"]

ENV_PREFIX = "DEEPRESEARCH_"
# DEEPRESEARCH_* variables that are not settings but name the config file.
NOT_SETTINGS = {ENV_PREFIX + "CONFIG"}


def _xdg(var: str, fallback: str) -> Path:
    return Path(os.environ.get(var) or Path.home() / fallback) / "deepresearch"


def default_config_path() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "config.toml"


class Paths(BaseModel):
    """Where things live under the data directory."""

    data_dir: Path
    cache_dir: Path

    @property
    def traces_db(self) -> Path:
        return self.data_dir / "traces.db"

    @property
    def checkpoints_db(self) -> Path:
        return self.data_dir / "checkpoints.db"

    @property
    def indexes(self) -> Path:
        return self.data_dir / "indexes"

    @property
    def adapters(self) -> Path:
        return self.data_dir / "adapters"

    @property
    def memory(self) -> Path:
        return self.data_dir / "memory"


# The parsed config file of the load in progress (read once, by load_settings, with clear errors).
_config_data: ContextVar[dict[str, Any] | None] = ContextVar("deepresearch_config_data", default=None)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    data_dir: Path = Field(default_factory=lambda: _xdg("XDG_DATA_HOME", ".local/share"))
    cache_dir: Path = Field(default_factory=lambda: _xdg("XDG_CACHE_HOME", ".cache"))
    index: str = Field("demo", description="local index used by search when none is named")
    model: ModelSettings = Field(default_factory=ModelSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    serve: VLLMServeSettings = Field(default_factory=VLLMServeSettings)
    train: TrainSettings = Field(default_factory=TrainSettings)
    eval: EvalSettings = Field(default_factory=EvalSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)  # `deepresearch serve` and `mcp --transport http`

    @model_validator(mode="after")
    def _fill_lower_layers(self) -> Settings:
        # Lower layers get the paths they need from here rather than reaching up for them.
        self.tools.data_dir = self.data_dir
        return self

    @property
    def paths(self) -> Paths:
        return Paths(data_dir=self.data_dir, cache_dir=self.cache_dir)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        data = _config_data.get()
        toml = InitSettingsSource(settings_cls, init_kwargs=data) if data else None
        return tuple(s for s in (init_settings, env_settings, toml) if s is not None)


def _has_key(data: dict[str, Any], loc: tuple[str, ...]) -> bool:
    for part in loc:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _origin(loc: tuple[str, ...], overrides: dict[str, Any], toml: dict[str, Any], path: Path | None) -> str:
    """Name where a bad value came from, in precedence order."""
    if _has_key(overrides, loc):
        return "command-line flag"
    env_name = ENV_PREFIX + "__".join(loc).upper()
    if env_name in os.environ:
        return f"environment variable {env_name}"
    if path and _has_key(toml, loc):
        return f"config file {path}"
    return "defaults"


def _is_file(path: Path) -> bool:
    """Path.is_file(), with the errors it can raise (a folder we may not enter, a name too long) as
    one SettingsError line instead of a traceback."""
    try:
        return path.is_file()
    except ValueError:  # an embedded NUL: no such file can exist
        return False
    except OSError as exc:
        raise SettingsError(f"{path}: cannot read config file: {exc.strerror or exc}") from None


def _shown(path: Path) -> str:
    """A path as an error line shows it: quoted when it holds a newline or another unprintable character."""
    text = str(path)
    return text if text.isprintable() else repr(text)


def load_settings(config: Path | None = None, **overrides: Any) -> Settings:
    """Build settings from every source. Raises SettingsError with one clear line."""
    explicit = config or (Path(os.environ[ENV_PREFIX + "CONFIG"]) if os.environ.get(ENV_PREFIX + "CONFIG") else None)
    if explicit is not None and not _is_file(explicit):
        raise SettingsError(f"config file not found: {_shown(explicit)}")
    path = explicit or (default_config_path() if _is_file(default_config_path()) else None)
    toml = read_toml(path) if path else {}
    check_environment(Settings, os.environ, ENV_PREFIX, NOT_SETTINGS)
    token = _config_data.set(toml)
    try:
        return Settings(**overrides)
    except SourceError as exc:  # a value pydantic-settings could not parse, not caught above
        raise SettingsError(f"bad setting in the environment: {' '.join(str(exc).split())}") from None
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(str(p) for p in err["loc"])
        key = ".".join(loc)
        where = _origin(loc, overrides, toml, path)
        reason = "unknown setting" if err["type"] == "extra_forbidden" else " ".join(str(err["msg"]).split())
        raise SettingsError(f"bad setting '{key}' ({where}): {reason}") from None
    finally:
        _config_data.reset(token)


_current: Settings | None = None


def set_settings(settings: Settings) -> None:
    global _current
    _current = settings


def get_settings() -> Settings:
    """The settings the CLI loaded for this process (loaded from defaults/env/file if none yet)."""
    global _current
    if _current is None:
        _current = load_settings()
    return _current
