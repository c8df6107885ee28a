"""The `python` tool in real bubblewrap: results, written files, and hostile code contained."""

from __future__ import annotations

import os
import subprocess
import time
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


async def test_fork_bomb_is_contained(python):
    start = time.perf_counter()
    out = await run(python, (
        "import os, time\n"
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
    ))
    assert out["stdout"].startswith("children ") and int(out["stdout"].split()[1]) <= 40  # RLIMIT_NPROC held
    assert out["limit"] in ("wall_time", "cpu_time") and not out["ok"]
    assert time.perf_counter() - start < 8
    time.sleep(0.5)
    leftover = subprocess.run(["pgrep", "-u", "65534", "-f", "main.py"], capture_output=True, text=True).stdout
    assert leftover == ""  # every forked child died with the sandbox
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
