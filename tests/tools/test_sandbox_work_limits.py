"""The sandbox's writable folders hold a fixed number of files and bytes, enforced by the kernel on every write,
so neither a loop of mkdir nor a fast writer reaches the host's disk. Real bubblewrap; the host side of the
sandbox's folders is measured while the code runs."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from deepresearch.tools.config import SandboxSettings
from deepresearch.tools.sandbox.tool import PythonTool

from .test_sandbox import run

pytestmark = pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed")


def _disk_bytes(root: Path) -> int:
    """Host disk blocks under `root`, folders included (a folder costs a block whatever its size says)."""
    total = 0
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


@pytest.fixture
def host_dir(monkeypatch) -> Iterator[Path]:
    """A folder of this test's own that the sandbox's host folders are made in (nobody may pass through it)."""
    folder = Path(tempfile.mkdtemp(prefix="sandbox-host-"))
    folder.chmod(0o711)
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    monkeypatch.undo()
    shutil.rmtree(folder, ignore_errors=True)


async def run_measuring_host_disk(tool: PythonTool, code: str, host_dir: Path) -> tuple[dict, int]:
    """Run `code` while sampling the disk used under `host_dir` (this run's only): (output, peak bytes)."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _disk_bytes(host_dir))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out = await run(tool, code)
    finally:
        done.set()
        sampler.join()
    return out, peak[0]


MKDIR_LOOP = """
import os
made = 0
try:
    for made in range(50_000):
        os.mkdir(f'{FOLDER}/d{made}')
    made = 50_000
except OSError as e:
    print('stopped:', e.strerror)
print('made', made)
open('/work/after.txt', 'w').write('still here')
"""


@pytest.mark.parametrize("folder", ["/work", "/tmp"])
async def test_a_mkdir_loop_is_stopped_at_the_file_limit(folder, host_dir):
    """Before: 111,182 folders (436 MB of host disk) in 6 s with ok=True; folders have no size to watch."""
    tool = PythonTool(SandboxSettings(wall_timeout_s=20, cpu_s=15, max_work_files=2_000))
    out, disk = await run_measuring_host_disk(tool, MKDIR_LOOP.replace("{FOLDER}", folder), host_dir)
    lines = out["stdout"].splitlines()
    assert lines[0] == "stopped: No space left on device", out
    assert 1_000 < int(lines[1].split()[1]) <= 2_000
    assert disk < 2 << 20, disk  # the folders never reached the host's disk
    if folder == "/work":
        assert out["limit"] == "disk" and not out["ok"] and "2000 files" in out["error"], out
        # /work was full, so after.txt could not be written; the run's other files are still returned
        assert "No space left on device" in out["stderr"]
    else:
        assert out["ok"] and [f["name"] for f in out["files"]] == ["after.txt"]


FAST_WRITER = """
import os
written = 0
try:
    for i in range(300):
        with open(f'/work/chunk{i}', 'wb') as f:
            f.write(bytes(1 << 20))
        written += 1
except OSError as e:
    print('stopped:', e.strerror)
print('MB', written)
"""


async def test_a_fast_writer_is_stopped_at_the_size_limit(host_dir):
    """Before: a disk-use watchdog polled every 0.25 s and code wrote up to ~230 MB past the 64 MB limit."""
    tool = PythonTool(SandboxSettings(wall_timeout_s=20, cpu_s=15, max_disk_mb=64, max_files=3,
                                      max_file_bytes=1000))
    out, disk = await run_measuring_host_disk(tool, FAST_WRITER, host_dir)
    lines = out["stdout"].splitlines()
    assert lines[0] == "stopped: No space left on device", out
    assert int(lines[1].split()[1]) <= 64  # not one megabyte past the limit
    assert out["limit"] == "disk" and "64 MB" in out["error"]
    assert disk < 2 << 20, disk  # what the code wrote stayed off the host's disk
    # files too large to return are listed with their size
    assert [(f["name"], f["size"], f["content"]) for f in out["files"]] == [
        ("chunk0", 1 << 20, None), ("chunk1", 1 << 20, None), ("chunk10", 1 << 20, None)]


async def test_dev_shm_holds_a_fixed_number_of_files():
    tool = PythonTool(SandboxSettings(wall_timeout_s=20, cpu_s=15))
    out = await run(tool, MKDIR_LOOP.replace("{FOLDER}", "/dev/shm"))
    assert out["stdout"].startswith("stopped: No space left on device") and int(out["stdout"].split()[-1]) < 1_000


async def test_files_written_before_a_kill_are_returned_and_special_files_are_not_opened():
    tool = PythonTool(SandboxSettings(wall_timeout_s=2, cpu_s=2))
    out = await run(tool, (
        "import os, time\n"
        "os.mkfifo('/work/a_fifo'); os.symlink('/etc/passwd', '/work/b_link')\n"
        "os.makedirs('/work/sub'); open('/work/sub/c.txt', 'w').write('kept')\n"
        "time.sleep(60)\n"
    ))
    assert out["limit"] == "wall_time"
    assert [(f["name"], f["content"]) for f in out["files"]] == [("sub/c.txt", "kept")]
