"""Property tests of the settings sources: whatever bytes the config file holds and whatever the
DEEPRESEARCH_* environment says, loading gives valid settings or one SettingsError line (exit 2 from the
CLI) — never a traceback, never a silently ignored variable."""

from __future__ import annotations

import json
import math
import os
import string
from pathlib import Path
from unittest import mock

import typer
from deepresearch.app.cli import app
from deepresearch.app.settings import ENV_PREFIX, Settings, SettingsError, load_settings
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

# Real setting paths (scalars, lists, tables, sub-models) plus near misses, so generated input reaches
# the interesting code: type errors, JSON parsing, unknown names at every depth.
KEYS = [
    "DATA_DIR", "CACHE_DIR", "INDEX", "CONFIG", "MODEL", "MODEL__NAME", "MODEL__API_KEY", "MODEL__MAX_BATCH",
    "MODEL__TEMPERATURE", "MODEL__BACKEND", "AGENT__BUDGET__MAX_ROUNDS", "AGENT__BUDGET", "TOOLS",
    "TOOLS__BROWSER__ALLOW_HOSTS", "TOOLS__SEARCH__BACKENDS", "TOOLS__SEARCH__MIN_INTERVAL_S",
    "TOOLS__SEARCH__MIN_INTERVAL_S__DDG", "TOOLS__SANDBOX__ENABLED", "TRAIN__REWARDS__F1", "MODLE", "DATADIR",
    "MODEL__", "__MODEL", "", "TOOLS____BROWSER", "AGENT__BUDGET__MAX_ROUNDS__X",
]
SAFE_PATH_KEYS = {"DATA_DIR", "CACHE_DIR", "CONFIG"}  # generated values for these would point at real places

env_text = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=20).map(os.fsdecode),  # undecodable bytes arrive as surrogate escapes
    st.sampled_from(["1", "0", "-1", "true", "null", "[]", "{}", '["127.0.0.1"]', '{"ddg": 1}', "1e999", "nan"]),
).filter(lambda v: "\0" not in v)

env_name = st.one_of(
    st.sampled_from(KEYS),
    st.text(alphabet=string.ascii_letters + string.digits + "_", max_size=30),
).map(lambda k: ENV_PREFIX + k).flatmap(lambda k: st.sampled_from([k, k.lower()]))


def toml_value() -> st.SearchStrategy[str]:
    scalar = st.one_of(
        st.integers().map(str), st.floats().map(lambda f: "nan" if math.isnan(f) else repr(f).replace("inf", "inf")),
        st.booleans().map(lambda b: str(b).lower()), st.text(max_size=20).map(json.dumps),
    )
    return st.recursive(scalar, lambda inner: st.lists(inner, max_size=3).map(lambda xs: f"[{', '.join(xs)}]"),
                        max_leaves=6)


toml_section = st.sampled_from(["", "model", "agent", "agent.budget", "tools.browser", "tools.search", "modle",
                                "tools", "train.rewards", "serve", "eval"])
toml_key = st.sampled_from(["name", "max_batch", "backends", "allow_hosts", "max_rounds", "data_dir", "index",
                            "temperature", "min_interval_s", "nmae", "enabled", "f1", "api_key"])
structured_toml = st.lists(st.tuples(toml_section, toml_key, toml_value()), max_size=6).map(
    lambda items: "".join(f"[{s}]\n{k} = {v}\n" if s else f"{k} = {v}\n" for s, k, v in items).encode()
)
toml_bytes = st.one_of(
    st.binary(max_size=200), st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")), structured_toml,
)


def _base_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(ENV_PREFIX)}
    env["XDG_CONFIG_HOME"] = str(tmp / "no-config")
    return env


def _load(tmp: Path, toml: bytes | None, env: dict[str, str]) -> Settings | SettingsError:
    config = None
    if toml is not None:
        config = tmp / "config.toml"
        config.write_bytes(toml)
    with mock.patch.dict(os.environ, {**_base_env(tmp), **env}, clear=True):
        try:
            return load_settings(config, data_dir=tmp / "data")
        except SettingsError as exc:
            return exc


def _check(result: Settings | SettingsError) -> None:
    if isinstance(result, SettingsError):
        message = str(result)
        assert message and "\n" not in message and "Traceback" not in message


CASES = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@CASES
@given(toml=toml_bytes)
def test_any_config_file_bytes(tmp_path: Path, toml: bytes):
    _check(_load(tmp_path, toml, {}))


@CASES
@given(env=st.dictionaries(env_name, env_text, max_size=4))
@example(env={ENV_PREFIX + "CONFIG": "\n"})  # found by hypothesis: the missing path's newline broke the line
def test_any_environment(tmp_path: Path, env: dict[str, str]):
    result = _load(tmp_path, None, env)
    _check(result)
    if isinstance(result, Settings):  # accepted: every variable named a real setting
        for name in env:
            top = name[len(ENV_PREFIX):].split("__")[0].lower()
            assert top in Settings.model_fields or name.upper() == ENV_PREFIX + "CONFIG"


def test_unknown_top_level_variable_is_caught_but_real_ones_work(tmp_path: Path):
    assert isinstance(_load(tmp_path, None, {"DEEPRESEARCH_MODLE": "x"}), SettingsError)
    loaded = _load(tmp_path, None, {"DEEPRESEARCH_INDEX": "mine", "deepresearch_cache_dir": str(tmp_path)})
    assert isinstance(loaded, Settings) and loaded.index == "mine" and loaded.cache_dir == tmp_path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(toml=st.one_of(st.none(), toml_bytes),
       env=st.dictionaries(env_name.filter(lambda k: k.upper()[len(ENV_PREFIX):] not in SAFE_PATH_KEYS), env_text,
                           max_size=3))
def test_cli_gives_one_line_and_exit_2_or_runs(tmp_path: Path, toml: bytes | None, env: dict[str, str]):
    """Through the real command group (and its error boundary): `runs list` with that input."""
    args = ["--data-dir", str(tmp_path / "data")]
    if toml is not None:
        (tmp_path / "config.toml").write_bytes(toml)
        args += ["--config", str(tmp_path / "config.toml")]
    with mock.patch.dict(os.environ, {**_base_env(tmp_path), **env}, clear=True):
        result = CliRunner().invoke(app, [*args, "runs", "list"])
    if result.exception is not None and not isinstance(result.exception, SystemExit | typer.Exit):
        raise result.exception
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
