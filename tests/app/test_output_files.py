"""Output files (`ask --out`, `runs show --out`, `runs export`) never replace a device, FIFO or link, and never
follow a file planted under the temporary name: the real CLI in a child process, real device nodes and FIFOs."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from deepresearch.app.file_output import _STREAM_NAME, write_output

from .fake_openai import fake_openai_server
from .helpers import clean_env, cli, one_error_line
from .stored_runs import finished_and_stopped


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data dir holding a finished run, and that run's id."""
    tmp = tmp_path_factory.mktemp("stored")
    return tmp, finished_and_stopped(tmp / "data")[0].run_id


def _char_device(path: Path, minor: int) -> Path:
    """A character device like /dev/null (minor 3) or /dev/full (minor 7), made where the test can own it."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making device nodes needs root (CAP_MKNOD)")
    return path


def test_a_full_device_is_written_in_place_and_its_error_is_one_line(stored: tuple[Path, str], tmp_path: Path):
    data, run_id = stored
    full = _char_device(tmp_path / "full", 7)
    proc = cli("runs", "show", run_id, "--json", "--out", str(full), env=clean_env(data))
    assert proc.returncode == 1, proc.stderr
    assert f"{full}: No space left on device" in one_error_line(proc)
    assert stat.S_ISCHR(os.stat(full).st_mode), "the device node was replaced by a plain file"
    assert os.listdir(tmp_path) == ["full"], "a temporary file was left behind"


def test_a_null_device_takes_the_report_and_stays_a_device(stored: tuple[Path, str], tmp_path: Path):
    data, run_id = stored
    null = _char_device(tmp_path / "null", 3)
    proc = cli("runs", "show", run_id, "--out", str(null), "--format", "md", env=clean_env(data))
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_a_fifo_gets_the_report_and_stays_a_fifo(stored: tuple[Path, str], tmp_path: Path):
    data, run_id = stored
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader is there, so the writer's open does not wait
    try:
        proc = cli("runs", "show", run_id, "--out", str(fifo), env=clean_env(data), timeout=60)
        received = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(received)["id"] == run_id
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("name", ["/dev/fd/1", "/proc/self/fd/1"])
def test_a_name_of_stdout_writes_to_the_commands_own_stdout(stored: tuple[Path, str], name: str):
    # Not /dev/stdout itself here: run as root against a version with the bug, the test would turn the
    # machine's /dev/stdout into a plain file (it did once). /dev/fd/1 and /proc/self/fd/1 cannot be replaced.
    data, run_id = stored
    proc = cli("runs", "show", run_id, "--out", name, "--format", "md", env=clean_env(data))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# When was Ada Lovelace born?"), proc.stdout[:300]


def test_dev_stdout_and_stderr_are_names_of_the_commands_own_streams():
    for name in ("/dev/stdout", "/dev/stderr", "/dev/fd/3", "/proc/self/fd/1", "/proc/123/fd/2"):
        assert _STREAM_NAME.match(name), name
    for name in ("/dev/shm/r.md", "/dev/stdout.md", "/proc/self/fd"):
        assert not _STREAM_NAME.match(name), name


def test_a_planted_temporary_file_is_never_followed(stored: tuple[Path, str], tmp_path: Path):
    data, run_id = stored
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "r.md"
    for planted in (".r.md.partial", ".runs.jsonl.partial"):  # the names used before
        (tmp_path / planted).symlink_to(victim)
    shown = cli("runs", "show", run_id, "--out", str(out), env=clean_env(data))
    exported = cli("runs", "export", str(tmp_path / "runs.jsonl"), env=clean_env(data))
    assert shown.returncode == 0 and exported.returncode == 0, shown.stderr + exported.stderr
    assert victim.read_text() == "keep me"
    assert out.read_text().startswith("# When was Ada Lovelace born?")
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 2


def test_a_symlink_to_a_file_keeps_pointing_at_the_new_report(stored: tuple[Path, str], tmp_path: Path):
    data, run_id = stored
    real = tmp_path / "reports" / "latest.md"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "r.md"
    link.symlink_to(real)
    proc = cli("runs", "show", run_id, "--out", str(link), env=clean_env(data))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and real.read_text().startswith("# When was Ada Lovelace born?")
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(os.listdir(real.parent)) == ["latest.md"]


def test_ask_out_to_a_full_device_fails_naming_the_saved_run(tmp_path: Path):
    full = _char_device(tmp_path / "full", 7)
    with fake_openai_server() as server:
        env = clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                        DEEPRESEARCH_MODEL__BASE_URL=server.base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                        DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
        proc = cli("ask", "--offline", "--quiet", "--json", "--out", str(full), "Who designed the Analytical Engine?",
                   env=env)
    assert proc.returncode == 1, proc.stderr
    line = one_error_line(proc)
    assert f"cannot write {full} (No space left on device)" in line and "deepresearch runs show " in line
    assert "wrote" not in proc.stderr
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_a_failed_writer_leaves_the_old_file_and_no_temporary(tmp_path: Path):
    target = tmp_path / "out.csv"
    target.write_text("old")

    def broken(fh):
        fh.write(b"half")
        raise RuntimeError("writer failed")

    with pytest.raises(RuntimeError):
        write_output(target, broken)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.csv"]


def test_a_new_file_gets_the_usual_permissions(tmp_path: Path):
    old = os.umask(0o022)
    try:
        write_output(tmp_path / "new.md", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o644
