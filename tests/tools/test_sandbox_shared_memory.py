"""Memory no mount caps: System V shared memory and message queues, memfd files. In real bubblewrap, code
that tries to hold 1.2 GB of them (beyond its 256 MB memory limit) gets none, while the host's shared
memory is sampled."""

from __future__ import annotations

from pathlib import Path

import pytest
from deepresearch.tools.config import SandboxSettings
from deepresearch.tools.sandbox.tool import PythonTool

from .test_sandbox import run, run_measuring_shmem

pytestmark = pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="bubblewrap is not installed")

HOLD = """
import ctypes, mmap, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
held = 0
for i in range(6):  # System V shared memory: 6 x 128 MB
    shm = libc.shmget(0, 128 << 20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if shm < 0:
        print('shmget', os.strerror(ctypes.get_errno())); break
    addr = libc.shmat(shm, None, 0)
    if addr in (None, ctypes.c_void_p(-1).value):  # attaching maps it: RLIMIT_AS stops it; writes go
        print('shmat', os.strerror(ctypes.get_errno()))  # through a memfd-like file instead
        break
    ctypes.memset(addr, 1, 128 << 20); libc.shmdt(ctypes.c_void_p(addr)); held += 128
print('sysv MB', held)
held = 0
try:
    for i in range(4):  # memfd files: 4 x 100 MB, written, never mapped (RLIMIT_AS does not see them)
        fd = os.memfd_create(f'hold{i}')
        for _ in range(100):
            os.write(fd, bytes(1 << 20))
        held += 100
except OSError as e:
    print('memfd', e.strerror)
print('memfd MB', held)
held = 0
for i in range(64):  # message queues: up to 16 KB each by default; the count is what adds up
    if libc.msgget(0, 0o1600) < 0:
        print('msgget', os.strerror(ctypes.get_errno())); break
    held += 1
print('queues', held)
time.sleep(1)  # hold it while the host is measured
"""


async def test_shared_memory_and_memfd_cannot_hold_host_memory():
    tool = PythonTool(SandboxSettings(wall_timeout_s=15, cpu_s=10, memory_mb=256, max_disk_mb=128))
    out, grown = await run_measuring_shmem(tool, HOLD)
    assert out["exit_code"] == 0, out
    lines = out["stdout"].splitlines()
    assert "sysv MB 0" in lines and "memfd MB 0" in lines and "queues 0" in lines, out
    assert grown < 100 * 1024 * 1024, f"host shared memory grew {grown >> 20} MB"
    # What the data tools need still works: numpy, and multiprocessing's locks (POSIX shm in /dev/shm).
    ok = await run(tool, "import numpy as np, multiprocessing as m; m.Lock(); print(int(np.arange(5).sum()))")
    assert ok["stdout"] == "10\n", ok


def test_an_architecture_without_a_filter_disables_the_tool():
    from deepresearch.tools.sandbox.seccomp import SeccompUnsupported, program

    assert program("x86_64") != program("aarch64")
    with pytest.raises(SeccompUnsupported, match="riscv64"):
        program("riscv64")
