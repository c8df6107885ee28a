"""The products kernel (gguf_products.c) compiled for this machine and loaded with ctypes.

It is compiled once per machine with the system's C compiler (`cc -O3 -march=native`) into a directory beside
the converted weights (KERNEL_DIR_NAME), keyed by the source, the compiler and the CPU, so a new source or CPU
builds anew and the few newest builds are kept. The source ships as package data next to this file.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
from pathlib import Path

from ..disk_store import keep_newest, replace_atomically

KERNEL_SOURCE = Path(__file__).with_name("gguf_products.c")
KERNEL_DIR_NAME = "kernels"
KEPT_BUILDS = 4  # kernel builds kept (a new source, compiler or CPU makes a new one; ~30 KB each)


class KernelError(RuntimeError):
    """The products kernel cannot be built or loaded here."""


def build_kernel(directory: Path, flags: tuple[str, ...] = ()) -> ctypes.CDLL:
    """The compiled kernel, built into `directory` on first use (keyed by source, compiler, CPU and `flags`,
    extra compiler options: the tests build the portable path with `-mno-avx512f`)."""
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        raise KernelError("no C compiler (cc) found")
    source = KERNEL_SOURCE.read_bytes()
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise KernelError(f"cannot run {compiler}: {exc}") from exc
    identity = "\n".join([version, _cpu_identity(), *flags])
    digest = hashlib.sha256(source + identity.encode()).hexdigest()[:16]
    path = Path(directory) / f"gguf_products-{digest}.so"
    if not path.is_file():
        try:
            _compile(compiler, flags, path)
        except OSError as exc:  # the directory: not writable, disk full
            raise KernelError(f"cannot build the kernel in {directory}: {exc}") from exc
    try:
        kernel = ctypes.CDLL(str(path))
    except OSError as exc:
        raise KernelError(f"cannot load {path}: {exc}") from exc
    pointer, size = ctypes.c_void_p, ctypes.c_int
    for name in ("q4_1_products", "q8_0_products"):
        function = getattr(kernel, name)
        function.argtypes = [pointer, size, size, pointer, pointer, pointer, size, size, size]
        function.restype = None
    kernel.gguf_set_threads.argtypes = [size]
    kernel.gguf_set_threads.restype = size
    return kernel


def _compile(compiler: str, flags: tuple[str, ...], path: Path) -> None:
    """Build the kernel into `path`, whole or not at all; older builds beyond a few are deleted."""

    def build(target: str) -> None:
        command = [compiler, "-O3", "-march=native", *flags, "-shared", "-fPIC", "-pthread", "-o", target,
                   str(KERNEL_SOURCE)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        except subprocess.SubprocessError as exc:
            raise KernelError(f"{compiler} failed: {exc}") from exc
        if done.returncode != 0:
            said = (done.stderr or done.stdout).strip().splitlines()
            raise KernelError(f"{compiler} failed: {said[0] if said else f'exit status {done.returncode}'}")

    replace_atomically(path, build)
    keep_newest(path.parent, "gguf_products-*.so", KEPT_BUILDS)


def _cpu_identity() -> str:
    """What `-march=native` compiles for: the CPU's flags (Linux), else the platform's name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return line
    except OSError:
        pass
    return f"{platform.machine()} {platform.processor()}"

