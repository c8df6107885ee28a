"""Bad settings, data dirs and questions: one `error:` line on stderr and exit 2, through the real CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .helpers import clean_env, cli, one_error_line


def test_config_file_that_is_not_utf8(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_bytes(b'[model]\nname = "caf\xe9"\n')  # latin-1, as some editors save it
    proc = cli("--config", str(config), "runs", "list", env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "not UTF-8" in one_error_line(proc) and str(config) in proc.stderr


@pytest.mark.parametrize(("name", "value", "message"), [
    ("DEEPRESEARCH_TOOLS__BROWSER__ALLOW_HOSTS", "127.0.0.1", "must be written as JSON"),
    ("DEEPRESEARCH_TOOLS__SEARCH__MIN_INTERVAL_S", "ddg=1", "must be written as JSON"),
    ("DEEPRESEARCH_TOOLS", "{", "must be written as JSON"),
    ("DEEPRESEARCH_MODLE__NAME", "x", "unknown setting 'modle.name'"),
    ("DEEPRESEARCH_DATADIR", "/tmp", "unknown setting 'datadir'"),
    ("DEEPRESEARCH_MODEL__NAEM", "x", "unknown setting 'model.naem'"),
    ("DEEPRESEARCH_MODEL__MAX_BATCH", "many", "model.max_batch"),
    ("DEEPRESEARCH_MODEL__FORWARD", "fast", "model.forward"),
    ("DEEPRESEARCH_MODEL__PROMPT_CACHE_TOKENS", "-1", "model.prompt_cache_tokens"),
    ("DEEPRESEARCH_MODEL__REUSE_GREEDY", "sometimes", "model.reuse_greedy"),
    ("DEEPRESEARCH_MODEL__GGUF_PRODUCTS", "fast", "model.gguf_products"),
    ("DEEPRESEARCH_MODEL__BF16_PRODUCTS", "fast", "model.bf16_products"),
])
def test_bad_environment_values_name_the_variable(tmp_path: Path, name: str, value: str, message: str):
    proc = cli("runs", "list", env=clean_env(tmp_path, **{name: value}))
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc)
    assert message in line and name in line


def test_real_top_level_variables_still_work(tmp_path: Path):
    config = tmp_path / "elsewhere.toml"
    config.write_text("[agent.budget]\nmax_rounds = 1\n")
    env = clean_env(tmp_path, DEEPRESEARCH_CACHE_DIR=str(tmp_path / "cache"), DEEPRESEARCH_INDEX="mine",
                    DEEPRESEARCH_CONFIG=str(config),
                    DEEPRESEARCH_TOOLS__BROWSER__ALLOW_HOSTS='["127.0.0.1:8765"]',
                    DEEPRESEARCH_TOOLS__SEARCH__MIN_INTERVAL_S__DDG="2")
    proc = cli("runs", "list", env=env)
    assert proc.returncode == 0 and "no runs yet" in proc.stdout, proc.stderr
    assert (tmp_path / "data" / "traces.db").is_file()  # DEEPRESEARCH_DATA_DIR was honoured


COMMANDS = [("runs", "list"), ("ask", "--offline", "q?"), ("index", "{notes}"), ("runs", "export", "{out}")]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("layout", ["file", "under-a-file"])
def test_data_dir_that_is_not_a_directory(tmp_path: Path, command: tuple[str, ...], layout: str):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    data_dir = blocker if layout == "file" else blocker / "data"
    proc = _run_with_data_dir(tmp_path, command, data_dir)
    assert proc.returncode == 2
    assert f"{blocker} is not a directory" in one_error_line(proc)
    assert blocker.read_text() == "not a folder"  # nothing lost


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="needs setpriv to drop root")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_data_dir_that_is_not_writable(command: tuple[str, ...]):
    # Outside pytest's tmp_path, whose parent only root may enter: the unprivileged user must reach it.
    base = Path(tempfile.mkdtemp(prefix="deepresearch-test-"))
    try:
        base.chmod(0o755)
        locked = base / "locked"
        locked.mkdir(mode=0o555)
        proc = _run_with_data_dir(base, command, locked / "data", unprivileged=True)
        assert proc.returncode == 2
        assert f"{locked} is not writable" in one_error_line(proc)
        assert list(locked.iterdir()) == []
    finally:
        shutil.rmtree(base)


def _run_with_data_dir(tmp_path: Path, command: tuple[str, ...], data_dir: Path,
                       unprivileged: bool = False) -> subprocess.CompletedProcess[str]:
    notes = tmp_path / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "a.md").write_text("# A\n\nalpha")
    args = [a.format(notes=notes, out=tmp_path / "runs.jsonl") for a in command]
    env = clean_env(tmp_path, DEEPRESEARCH_DATA_DIR=str(data_dir))
    if unprivileged and os.geteuid() == 0:
        # root writes anywhere: run as nobody, whose view of the folder is what a user would see
        env["HOME"] = str(tmp_path)
        return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                               "-m", "deepresearch", *args], capture_output=True, text=True, timeout=300, env=env,
                              stdin=subprocess.DEVNULL)
    return cli(*args, env=env)


def test_question_too_long_for_the_model_is_bad_input(tmp_path: Path):
    proc = cli("ask", "--offline", "x" * 130_000, env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "130,000 characters" in one_error_line(proc)
    assert not (tmp_path / "data" / "traces.db").exists()  # refused before anything started
