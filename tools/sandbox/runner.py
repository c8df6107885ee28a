"""Run untrusted Python in bubblewrap with resource limits; never without the sandbox.

Layers, outermost first:
- workfs.py (a script in front of the command): as root, drop to an unprivileged uid, because the kernel
  does not enforce RLIMIT_NPROC for root; mount size- and inode-capped tmpfs folders for /work, /tmp and
  /dev/shm in a mount namespace of its own (bwrap's tmpfs takes no inode limit, a host folder no limit at
  all), and copy the written files out when the sandbox has ended;
- prlimit: address space, CPU seconds, processes, file size, open files, no core dumps;
- bwrap: new user/pid/net/ipc/uts/cgroup namespaces (no network at all), read-only /usr, no home,
  a read-only minimal /dev (null, zero, random, …), those capped folders as the only writable paths, a
  cleared environment;
- seccomp (seccomp.py): no System V shared memory or message queues, no memfd files: kernel-held memory
  that neither RLIMIT_AS nor a mount's size would count;
- here: a wall-clock timeout and an output cap, each killing the sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from deepresearch.tools.config import SandboxSettings

from . import workfs
from .seccomp import SeccompUnsupported, program, program_fd

WORK = "/work"
SCRIPT = "main.py"
TMPFS_BYTES = 64 * 1024 * 1024
SHM_BYTES = 16 * 1024 * 1024  # POSIX shared memory / multiprocessing locks need little
SHM_INODES = 256
_WORKFS = Path(workfs.__file__)
# The host folder of one run: ours (0711), holding the script (0600: workfs reads it while still root, so the
# sandbox's uid must not be able to swap it) and, owned by the sandbox's uid, the capped mounts' mount points
# (seen only in workfs's mount namespace), the files copied out, and workfs's result.
_MOUNTS = {"work": WORK, "tmp": "/tmp", "shm": "/dev/shm"}
_OUT = "out"
_STATE = "state"
_RO_ETC = ("/etc/alternatives", "/etc/ld.so.cache", "/etc/fonts", "/etc/matplotlibrc", "/etc/localtime")
_USR_LINKS = ("bin", "lib", "lib64", "sbin")


CONTAINER_HINT = (
    "; in a container run it with security_opt seccomp=unconfined, apparmor=unconfined and "
    "systempaths=unconfined (see docker-compose.yml)"
)


class SandboxUnavailable(RuntimeError):
    pass


@dataclass
class RunLimits:
    wall_timeout_s: float
    cpu_s: int
    memory_bytes: int
    max_procs: int
    max_output_bytes: int
    max_disk_bytes: int
    max_inodes: int
    max_files: int
    max_file_bytes: int


@dataclass
class RawRun:
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    limit: str | None  # which of our limits ended the run, if one did
    duration_s: float
    workdir: Path  # the run's host folder: the caller removes it
    notes: list[str] = field(default_factory=list)

    @property
    def files_dir(self) -> Path:
        """The files the code wrote, as copied out (see workfs.py)."""
        return self.workdir / _OUT


def limits_for(settings: SandboxSettings) -> RunLimits:
    return RunLimits(
        wall_timeout_s=settings.wall_timeout_s, cpu_s=settings.cpu_s, memory_bytes=settings.memory_mb << 20,
        max_procs=settings.max_procs, max_output_bytes=settings.max_output_bytes,
        max_disk_bytes=settings.max_disk_mb << 20, max_inodes=settings.max_work_files,
        max_files=settings.max_files, max_file_bytes=settings.max_file_bytes,
    )


def sandbox_uid(settings: SandboxSettings) -> int:
    """The uid the code runs as: `run_as_uid` when we are root (workfs drops to it), else our own."""
    return settings.run_as_uid if os.geteuid() == 0 else os.getuid()


def prepare_workdir(code: str, run_uid: int) -> Path:
    """A run's fresh host folder holding the script, owned by the sandbox's uid; the caller removes it."""
    workdir = Path(tempfile.mkdtemp(prefix="deepresearch-sandbox-"))
    workdir.chmod(0o711)  # the sandbox's uid passes through to its folders, and sees nothing else here
    (workdir / SCRIPT).write_text(code)
    (workdir / SCRIPT).chmod(0o600)
    for name in (*_MOUNTS, _OUT, _STATE):
        (workdir / name).mkdir()
        if os.geteuid() == 0:
            os.chown(workdir / name, run_uid, run_uid)
    return workdir


def check_available(settings: SandboxSettings) -> None:
    if not settings.enabled:
        raise SandboxUnavailable("the python sandbox is disabled in the settings (sandbox.enabled=false)")
    for what, path in (("bubblewrap", settings.bwrap_path), ("sandbox python", settings.python_path)):
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise SandboxUnavailable(
                f"{what} not found at {path}; the python tool is disabled (it never runs code unsandboxed)"
            )
    if shutil.which("prlimit") is None:
        raise SandboxUnavailable("`prlimit` (util-linux) not found; the python tool is disabled")
    try:
        program()
    except SeccompUnsupported as exc:
        raise SandboxUnavailable(f"{exc}; the python tool is disabled") from None
    if (problem := _probe(settings)) is not None:
        raise SandboxUnavailable(f"bubblewrap cannot create a sandbox here ({problem}); the python tool is disabled")


_probed: dict[str, str | None] = {}


def _probe(settings: SandboxSettings) -> str | None:
    """Once per process and settings: bwrap can be installed yet unable to create namespaces or mount /proc."""
    key = settings.model_dump_json()
    if key not in _probed:
        _probed[key] = _run_probe(settings)
    return _probed[key]


def _run_probe(settings: SandboxSettings) -> str | None:
    """Run an empty script through exactly the command the tool runs (setpriv, prlimit and the whole bwrap
    argv, --proc included), so a sandbox that cannot start is found here and not at the first python call."""
    run_uid = sandbox_uid(settings)
    workdir = prepare_workdir("", run_uid)
    try:
        with program_fd() as seccomp:
            done = subprocess.run(_command(settings, limits_for(settings), workdir, run_uid, seccomp),
                                  capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL,
                                  pass_fds=(seccomp,))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode == 0:
        return None
    line = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0]
    if "proc" in line.lower() or "namespace" in line.lower() or "uid map" in line.lower():
        line += CONTAINER_HINT
    return line


def _usr_links() -> list[str]:
    """bwrap arguments recreating merged-/usr links (/lib -> usr/lib, …) that the loader needs."""
    links = [name for name in _USR_LINKS if Path("/", name).is_symlink()]
    return [arg for name in links for arg in ("--symlink", f"usr/{name}", f"/{name}")]


def _tasks_of_uid(uid: int) -> int:
    """Threads currently owned by a uid: RLIMIT_NPROC counts them, so the limit must sit above this."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields.get("Uid", "-1").split()[0]) == uid:
            total += int(fields.get("Threads", "1").strip())
    return total


def _workfs_spec(limits: RunLimits, workdir: Path, run_uid: int) -> str:
    caps = {"work": (limits.max_disk_bytes, limits.max_inodes), "tmp": (TMPFS_BYTES, limits.max_inodes),
            "shm": (SHM_BYTES, SHM_INODES)}
    return json.dumps({
        "base": str(workdir), "run_uid": run_uid, "script": SCRIPT, "work": "work", "out": _OUT, "state": _STATE,
        "mounts": [{"folder": name, "bytes": size, "inodes": inodes} for name, (size, inodes) in caps.items()],
        "max_files": limits.max_files, "max_file_bytes": limits.max_file_bytes,
    })


def _command(settings: SandboxSettings, limits: RunLimits, workdir: Path, run_uid: int, seccomp: int) -> list[str]:
    """The whole command; `seccomp` is the descriptor bwrap reads the filter from (passed to the child)."""
    nproc = _tasks_of_uid(run_uid) + limits.max_procs + 5  # + workfs and bwrap's own processes
    # workfs runs with the sandbox's interpreter: it must run as that uid, which may not read our venv.
    cmd = [str(settings.python_path), "-I", str(_WORKFS), _workfs_spec(limits, workdir, run_uid), "--"]
    cmd += [
        "prlimit", f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}", f"--nproc={nproc}",
        f"--fsize={limits.max_disk_bytes}", "--nofile=256", "--core=0", "--",
        str(settings.bwrap_path), "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
        "--seccomp", str(seccomp),
        "--hostname", "sandbox", "--ro-bind", "/usr", "/usr",
    ]
    cmd += _usr_links()
    for path in _RO_ETC:
        cmd += ["--ro-bind-try", path, path]
    cmd += [
        # bwrap's /dev is itself an uncapped tmpfs (its shm/ a plain folder in it): give /dev/shm its own
        # capped tmpfs, then make the rest of /dev read-only (device nodes still work; new files do not).
        "--proc", "/proc", "--dev", "/dev", "--bind", str(workdir / "shm"), "/dev/shm", "--remount-ro", "/dev",
        "--bind", str(workdir / "tmp"), "/tmp", "--bind", str(workdir / "work"), WORK,
        "--remount-ro", "/", "--chdir", WORK,
        "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
        "--setenv", "MPLBACKEND", "Agg", "--setenv", "MPLCONFIGDIR", "/tmp/matplotlib",
        "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "OMP_NUM_THREADS", "1",
        "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONUNBUFFERED", "1",
        str(settings.python_path), "-I", f"{WORK}/{SCRIPT}",
    ]
    return cmd


async def _read_capped(stream: asyncio.StreamReader, cap: int, over: asyncio.Event) -> bytes:
    """Keep the first `cap` bytes; past that, flag it and keep draining until EOF (the run is being
    killed), since a pipe nobody reads never reports EOF and the process would never be reaped."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > room:
            over.set()
    return bytes(kept)


def _stop(proc: asyncio.subprocess.Process, how: signal.Signals) -> None:
    """SIGTERM: workfs kills the sandbox and still copies the files out; SIGKILL: workfs itself (the sandbox
    dies with it, bwrap's --die-with-parent)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(proc.pid, how)


def _result(workdir: Path) -> dict:
    """What workfs.py wrote when the sandbox ended; nothing if it did not get that far."""
    try:
        fd = os.open(workdir / _STATE / workfs.RESULT, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            return json.loads(handle.read(10_000))
    except (OSError, ValueError):
        return {}


async def run_python(code: str, settings: SandboxSettings, limits: RunLimits) -> RawRun:
    """Run `code` as /work/main.py in a fresh sandbox; the caller removes `workdir` when done."""
    check_available(settings)
    run_uid = sandbox_uid(settings)
    workdir = prepare_workdir(code, run_uid)
    started = time.perf_counter()
    with program_fd() as seccomp:
        proc = await asyncio.create_subprocess_exec(
            *_command(settings, limits, workdir, run_uid, seccomp), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True,
            pass_fds=(seccomp,),
        )
    assert proc.stdout is not None and proc.stderr is not None
    over = asyncio.Event()
    out_task = asyncio.create_task(_read_capped(proc.stdout, limits.max_output_bytes, over))
    err_task = asyncio.create_task(_read_capped(proc.stderr, limits.max_output_bytes, over))
    wait_task = asyncio.create_task(proc.wait())
    over_task = asyncio.create_task(over.wait())
    limit: str | None = None
    deadline = started + limits.wall_timeout_s
    try:
        while not wait_task.done():
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                limit = "wall_time"
                break
            await asyncio.wait({wait_task, over_task}, timeout=min(0.25, remaining))
            if over.is_set():
                limit = "output"
                break
    finally:
        for how in (signal.SIGTERM, signal.SIGKILL):
            if not wait_task.done():
                _stop(proc, how)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(wait_task), 5)
        if not wait_task.done():  # ignored SIGKILL?? do not hang the caller
            wait_task.cancel()
        over_task.cancel()
    stdout, stderr = await asyncio.gather(out_task, err_task)
    result = _result(workdir)
    exit_code = result.get("exit_code", proc.returncode)
    if limit is None and result.get("full"):
        limit = "disk"  # /work is full: the kernel failed a write, mkdir or create
    if limit is None and exit_code in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        limit = "cpu_time"  # bwrap reports a signalled child as 128 + signal
    return RawRun(
        stdout=stdout, stderr=stderr, exit_code=exit_code, limit=limit,
        duration_s=time.perf_counter() - started, workdir=workdir,
    )
