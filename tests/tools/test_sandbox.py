"""The `python` tool in real bubblewrap: results, written files, and hostile code contained."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from deepresearch.tools.config import SandboxSettings
from deepresearch.tools.sandbox.tool import PythonTool

pytestmark = pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed")


@pytest.fixture
def python() -> PythonTool:
    return PythonTool(SandboxSettings(wall_timeout_s=3, cpu_s=2, memory_mb=512, max_output_bytes=20_000))


async def run(tool: PythonTool, code: str) -> dict:
    outcome = await tool.invoke({"code": code})
    assert outcome.ok, outcome.error  # the tool itself never fails on bad code; the run reports it
    return outcome.output


def host_is_healthy() -> None:
    assert subprocess.run(["true"], timeout=5).returncode == 0


async def test_runs_code_with_numpy_pandas_matplotlib_and_returns_files():
    out = await run(PythonTool(SandboxSettings()), (
        "import numpy as np, pandas as pd, matplotlib.pyplot as plt\n"
        "df = pd.DataFrame({'x': np.arange(5)})\n"
        "print(df['x'].sum())\n"
        "plt.plot(df['x']); plt.savefig('plot.png')\n"
        "open('result.csv', 'w').write(df.to_csv(index=False))\n"
        "import sys; print('warn', file=sys.stderr)\n"
    ))
    assert out["ok"] and out["exit_code"] == 0 and out["stdout"] == "10\n" and out["stderr"] == "warn\n"
    files = {f["name"]: f for f in out["files"]}
    assert files["result.csv"]["encoding"] == "utf-8" and files["result.csv"]["content"].startswith("x\n0\n")
    assert files["plot.png"]["encoding"] == "base64" and files["plot.png"]["size"] > 1000


async def test_errors_are_reported_not_raised(python):
    out = await run(python, "raise ValueError('bad input')")
    assert not out["ok"] and out["exit_code"] == 1 and out["error"] == "exit status 1: ValueError: bad input"


async def test_no_network(python):
    out = await run(python, (
        "import socket\n"
        "for host in [('1.1.1.1', 80), ('127.0.0.1', 22)]:\n"
        "    try:\n"
        "        socket.create_connection(host, timeout=2); print('connected', host)\n"
        "    except OSError as e:\n"
        "        print('refused', e.errno)\n"
        "print(socket.if_nameindex())\n"
    ))
    assert "connected" not in out["stdout"] and out["stdout"].count("refused") == 2
    assert "eth" not in out["stdout"]  # only the sandbox's own loopback exists


async def test_cannot_read_root_home_or_ssh(python):
    secret = Path.home() / ".deepresearch-sandbox-test-secret"
    secret.write_text("top secret")
    try:
        out = await run(python, (
            "import os\n"
            f"for p in ['/root', '/root/.ssh/id_rsa', os.path.expanduser('~/.ssh'), '{secret}', '/work/main']:\n"
            "    try:\n"
            "        print(p, open(p).read() if os.path.isfile(p) else os.listdir(p))\n"
            "    except OSError as e:\n"
            "        print(p, 'denied', type(e).__name__)\n"
            "print(sorted(os.environ))\n"
        ))
    finally:
        secret.unlink()
    assert "top secret" not in out["stdout"] and out["stdout"].count("denied") == 5
    assert "HOME" in out["stdout"] and "SSH_AUTH_SOCK" not in out["stdout"]


async def test_system_is_read_only(python):
    out = await run(python, (
        "for p in ['/usr/evil', '/etc/evil']:\n"
        "    try:\n"
        "        open(p, 'w'); print('wrote', p)\n"
        "    except OSError as e:\n"
        "        print('denied', p)\n"
    ))
    assert "wrote" not in out["stdout"]


def _host_shmem_bytes() -> int:
    """tmpfs/shared-memory pages in use on the whole host (bwrap's tmpfs mounts included)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("Shmem:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no Shmem line in /proc/meminfo")


async def run_measuring_shmem(tool: PythonTool, code: str) -> tuple[dict, int]:
    """Run `code` in the sandbox while sampling the host's shared memory: (output, peak growth in bytes)."""
    before = _host_shmem_bytes()
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _host_shmem_bytes())

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        out = await run(tool, code)
    finally:
        done.set()
        sampler.join()
    return out, peak[0] - before


def _host_dev_shm_used() -> int:
    st = os.statvfs("/dev/shm")
    return (st.f_blocks - st.f_bfree) * st.f_frsize


async def test_dev_is_minimal_and_dev_shm_is_capped():
    """Code that writes 16 x 60 MB into /dev/shm (host memory, unseen by RLIMIT_AS) is stopped at the cap."""
    tool = PythonTool(SandboxSettings(wall_timeout_s=10, cpu_s=8, memory_mb=512))
    dev_shm_before = _host_dev_shm_used()
    out, grown = await run_measuring_shmem(tool, (
        "import os, time\n"
        "written = 0\n"
        "try:\n"
        "    for i in range(16):\n"
        "        fd = os.open(f'/dev/shm/fill{i}', os.O_WRONLY | os.O_CREAT)\n"
        "        for _ in range(60):\n"
        "            written += os.write(fd, bytes(1 << 20))\n"
        "except OSError as e:\n"
        "    print('shm stopped:', e.strerror)\n"
        "print('shm MB', written >> 20)\n"
        "for p in ['/dev/evil', '/dev/shm/../evil2']:\n"
        "    try:\n"
        "        open(p, 'wb').write(b'x'); print('wrote', p)\n"
        "    except OSError as e:\n"
        "        print('denied', p, e.strerror)\n"
        "print(sorted(os.listdir('/dev')))\n"
        "time.sleep(1)  # hold what was written while the host is measured\n"
    ))
    lines = out["stdout"].splitlines()
    assert lines[0] == "shm stopped: No space left on device", out
    assert int(lines[1].split()[2]) <= 16  # the cap, not 960 MB
    assert lines[2].startswith("denied /dev/evil") and lines[3].startswith("denied /dev/shm/../evil2"), out
    assert "sda" not in lines[4] and "null" in lines[4]
    assert grown < 200 * 1024 * 1024  # host memory did not take the 960 MB
    assert _host_dev_shm_used() - dev_shm_before < 50 * 1024 * 1024
    assert (await run(tool, "import multiprocessing as m; l = m.Lock(); print('lock ok')"))["stdout"] == "lock ok\n"


def _pids_with(marker: str) -> list[int]:
    """Processes whose command line holds `marker`: one sandbox's processes, not another run's."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


async def test_fork_bomb_is_contained(python):
    # The code re-executes itself with a marker argument that every fork inherits, so the checks below
    # count this sandbox's processes only (other tests or runs may have sandboxes of the same uid).
    marker = f"forkbomb-{uuid.uuid4().hex}"
    start = time.perf_counter()
    task = asyncio.create_task(run(python, (
        "import os, sys, time\n"
        f"if sys.argv[1:] != ['{marker}']:\n"
        f"    os.execv('/usr/bin/python3', ['/usr/bin/python3', '-I', '/work/main.py', '{marker}'])\n"
        "children = 0\n"
        "for _ in range(10_000):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30); os._exit(0)\n"
        "        children += 1\n"
        "    except OSError:\n"
        "        break\n"
        "print('children', children, flush=True)\n"
        "while True:\n"
        "    try: os.fork()\n"
        "    except OSError: pass\n"
    )))
    most = 0
    while not task.done():
        most = max(most, len(_pids_with(marker)))
        await asyncio.sleep(0.05)
    out = await task
    assert most > 10  # the check sees this sandbox's forks while they live, so "none left" means something
    assert out["stdout"].startswith("children ") and int(out["stdout"].split()[1]) <= 40  # RLIMIT_NPROC held
    assert out["limit"] in ("wall_time", "cpu_time") and not out["ok"]
    assert time.perf_counter() - start < 8
    time.sleep(0.5)
    assert _pids_with(marker) == []  # every forked child died with the sandbox
    host_is_healthy()


async def test_ten_gigabyte_allocation_fails_cleanly(python):
    out = await run(python, "x = bytearray(10 * 1024 ** 3)\nprint('allocated')")
    assert out["limit"] == "memory" and "MemoryError" in out["error"] and "allocated" not in out["stdout"]
    host_is_healthy()


async def test_gigabyte_of_output_is_cut_off(python):
    start = time.perf_counter()
    out = await run(python, "import sys\nchunk = 'x' * 1_000_000\nfor _ in range(1000): sys.stdout.write(chunk)")
    assert out["limit"] == "output" and "output limit" in out["error"]
    assert len(out["stdout"]) == 20_000 and time.perf_counter() - start < 5


async def test_infinite_loop_hits_cpu_or_wall_limit(python):
    out = await run(python, "while True: pass")
    assert out["limit"] in ("cpu_time", "wall_time") and not out["ok"]
    out = await run(python, "import time\ntime.sleep(60)")
    assert out["limit"] == "wall_time" and "wall-clock limit of 3s" in out["error"]


async def test_written_symlinks_are_not_followed(python):
    out = await run(python, "import os\nos.symlink('/etc/passwd', 'leak')\nopen('ok.txt', 'w').write('fine')")
    assert [f["name"] for f in out["files"]] == ["ok.txt"]


async def test_disabled_without_bubblewrap():
    tool = PythonTool(SandboxSettings(bwrap_path=Path("/nonexistent/bwrap")))
    assert "bubblewrap not found" in tool.unavailable_reason()
    outcome = await tool.invoke({"code": "print(1)"})
    assert outcome.error_kind == "unavailable" and "never runs code unsandboxed" in outcome.error


async def test_bad_input(python):
    assert (await python.invoke({"code": ""})).error_kind == "bad_args"
    assert (await python.invoke({})).error_kind == "bad_args"
    assert (await python.invoke({"code": "x" * 200_000})).error_kind == "bad_args"
    assert os.path.exists("/usr/bin/python3")


async def test_start_up_probe_runs_exactly_the_command_the_tool_runs(monkeypatch):
    """The probe must fail where the tool would (e.g. `--proc` inside Docker), so it runs the same argv."""
    from deepresearch.tools.sandbox import runner

    monkeypatch.setattr(runner, "_tasks_of_uid", lambda uid: 0)  # RLIMIT_NPROC counts live threads: fix it
    monkeypatch.setattr(runner, "_probed", {})
    seen: dict[str, list[str]] = {}
    real_run, real_exec = subprocess.run, asyncio.create_subprocess_exec

    def spy_run(cmd, *args, **kwargs):
        seen["probe"] = list(cmd)
        return real_run(cmd, *args, **kwargs)

    async def spy_exec(*cmd, **kwargs):
        seen["tool"] = list(cmd)
        return await real_exec(*cmd, **kwargs)

    monkeypatch.setattr(runner.subprocess, "run", spy_run)
    monkeypatch.setattr(runner.asyncio, "create_subprocess_exec", spy_exec)
    tool = PythonTool(SandboxSettings(wall_timeout_s=3, cpu_s=2, memory_mb=512))
    assert tool.unavailable_reason() is None
    assert (await run(tool, "print('hi')"))["stdout"] == "hi\n"

    def same_workdir(argv: list[str]) -> list[str]:  # each run gets a fresh work dir and seccomp descriptor
        workdir, fd = str(Path(argv[argv.index("--bind") + 1]).parent), argv.index("--seccomp") + 1
        return ["FD" if i == fd else arg.replace(workdir, "WORKDIR") for i, arg in enumerate(argv)]

    assert same_workdir(seen["probe"]) == same_workdir(seen["tool"])
    probe = seen["probe"]
    assert probe[probe.index("--proc"):][:2] == ["--proc", "/proc"]


async def test_a_probe_that_cannot_mount_proc_disables_the_tool_with_the_container_fix(monkeypatch):
    from deepresearch.tools.sandbox import runner

    monkeypatch.setattr(runner, "_probed", {})
    folder = Path(tempfile.mkdtemp(prefix="fake-bwrap-"))
    try:
        folder.chmod(0o755)  # it runs as nobody when the tests run as root
        bwrap = folder / "bwrap"
        bwrap.write_text("#!/bin/sh\necho 'bwrap: Cannot mount proc on /newroot/proc: Operation not permitted' >&2\n"
                         "exit 1\n")
        bwrap.chmod(0o755)
        reason = PythonTool(SandboxSettings(bwrap_path=bwrap)).unavailable_reason()
    finally:
        shutil.rmtree(folder)
    assert reason is not None and "mount proc" in reason and "systempaths=unconfined" in reason
