"""A seccomp filter for the sandbox: no memory outside what its limits count.

RLIMIT_AS counts what a process maps, and the tmpfs mounts have a size; System V shared memory and
message queues and memfd files are kernel-held memory that neither sees (a segment or a memfd written
with write() need not be mapped), and outlive the process that made them until the sandbox ends. Code
held 768 MB of SysV segments and 400 MB of memfd files under a 256 MB limit. Their system calls fail
with ENOSYS, which callers (libffi, Python's multiprocessing) treat as "not available here" and fall
back from; POSIX shared memory still works, as files in the capped /dev/shm.

bubblewrap loads the program from a file descriptor (`--seccomp FD`); `program_fd()` makes one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import struct
from collections.abc import Iterator

# linux/filter.h, linux/seccomp.h, linux/audit.h
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data

# arch → (AUDIT_ARCH value, {syscall: number}); memfd_secret's pages count only against RLIMIT_MEMLOCK.
_ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {"shmget": 29, "msgget": 68, "memfd_create": 319, "memfd_secret": 447}),
    "aarch64": (0xC00000B7, {"shmget": 194, "msgget": 186, "memfd_create": 279, "memfd_secret": 447}),
}
_X32_BIT = 0x40000000  # x86_64's x32 ABI: the same calls under other numbers


class SeccompUnsupported(RuntimeError):
    pass


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes:
    """The BPF program: other ABIs (32-bit calls on a 64-bit kernel, x32) get ENOSYS for every call, so the
    same memory cannot be had under another syscall number; the listed calls get ENOSYS; the rest run."""
    machine = machine or platform.machine()
    if machine not in _ARCHES:
        raise SeccompUnsupported(f"no seccomp filter for the {machine} architecture")
    arch, calls = _ARCHES[machine]
    denied = sorted(calls.values())
    deny = _insn(_RET_K, _RET_ERRNO | errno.ENOSYS)
    # Jump offsets count instructions after the jump; every deny jump lands on the final deny.
    body = [_insn(_LD_W_ABS, _ARCH), _insn(_JEQ_K, arch, 1, 0), deny, _insn(_LD_W_ABS, _NR)]
    checks = [(_JGE_K, _X32_BIT)] + [(_JEQ_K, nr) for nr in denied]
    for i, (op, k) in enumerate(checks):
        body.append(_insn(op, k, len(checks) - i, 0))  # to the deny after the allow
    return b"".join([*body, _insn(_RET_K, _RET_ALLOW), deny])


@contextlib.contextmanager
def program_fd() -> Iterator[int]:
    """A readable descriptor holding the program, for `bwrap --seccomp FD` (pass it to the child)."""
    read, write = os.pipe()  # the program is < 200 bytes: it fits the pipe before bwrap reads it
    try:
        os.write(write, program())
    finally:
        os.close(write)
    try:
        yield read
    finally:
        os.close(read)
