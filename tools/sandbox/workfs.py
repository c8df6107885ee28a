"""Size- and inode-capped folders for the sandbox, and the way files come back out of them.

Run as a script (standard library only, `python -I workfs.py SPEC -- COMMAND...`) in front of the sandbox's
command. bubblewrap's own tmpfs mounts take a size but no inode limit, and a bind-mounted host folder has
neither: a loop of mkdir made 111,182 folders (436 MB of host disk) in 6 s, and a disk-use watchdog let a
fast writer through 230 MB past its limit. So this script, outside the sandbox:

1. as root, drops to the sandbox's uid (the kernel does not enforce RLIMIT_NPROC for root);
2. enters a user namespace mapping only that uid, owning a new mount namespace: no privilege needed, and
   what it mounts is seen by no other process and vanishes with it;
3. mounts a tmpfs with `size=` and `nr_inodes=` on each folder of the spec: the kernel fails the write,
   mkdir or create that would pass a limit (no watchdog, no overshoot);
4. copies the script in and runs the command (prlimit + bwrap, which bind-mounts those folders into the
   sandbox) in a process group of its own, which SIGTERM kills;
5. when the command has ended (every sandboxed process is dead, so nothing races the copy), copies the
   first `max_files` regular files of the work folder, in the order the tool lists them, to `out/`: the
   content when at most `max_file_bytes`, else an empty file of the same size (listed, not returned);
   symlinks and special files are never opened. Then writes `state/result.json` (exit status, a full limit) and
   exits with the command's status.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import stat
import sys

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE = 1, 4
_libc = ctypes.CDLL(None, use_errno=True)
RESULT = "result.json"


class WorkFsError(RuntimeError):
    pass


def _check(result: int, what: str) -> None:
    if result != 0:
        raise WorkFsError(f"{what}: {os.strerror(ctypes.get_errno())}")


def _drop_to(run_uid: int) -> None:
    """As root: become the sandbox's uid (the kernel does not enforce RLIMIT_NPROC for root). Changing uid makes
    a process undumpable, which would leave /proc/self/uid_map root's: we write it next, so undo that."""
    if os.getuid() != 0:
        return
    os.setgroups([])
    os.setgid(run_uid)
    os.setuid(run_uid)
    _libc.prctl(_PR_SET_DUMPABLE, 1)


def _private_mount_namespace() -> None:
    """A user namespace mapping only ourselves owns a new mount namespace: mounting needs no privilege, and the
    mounts are seen by nobody else (as root in a container, which lacks CAP_SYS_ADMIN, this works the same)."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "cannot create a user and mount namespace")
    with open("/proc/self/setgroups", "w") as handle:
        handle.write("deny")
    with open("/proc/self/uid_map", "w") as handle:
        handle.write(f"{uid} {uid} 1\n")
    with open("/proc/self/gid_map", "w") as handle:
        handle.write(f"{gid} {gid} 1\n")
    _check(_libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "cannot make mounts private")


def _mount_tmpfs(path: str, size: int, inodes: int, run_uid: int) -> None:
    options = f"size={size},nr_inodes={inodes},mode=0700,uid={run_uid},gid={run_uid}".encode()
    _check(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options),
           f"cannot mount a tmpfs on {path}")


def _copy_out(work: str, out: str, skip: str, max_files: int, max_file_bytes: int) -> None:
    copied = 0
    for folder, dirs, files in os.walk(work, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            source = os.path.join(folder, name)
            relative = os.path.relpath(source, work)
            info = os.lstat(source)
            if relative == skip or not stat.S_ISREG(info.st_mode):
                continue
            target = os.path.join(out, relative)
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "xb") as handle:
                    if info.st_size <= max_file_bytes:
                        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                        with os.fdopen(fd, "rb") as src:
                            handle.write(src.read(max_file_bytes))
                    else:
                        handle.truncate(info.st_size)
            except OSError:  # a path too long to recreate here: not returned
                continue
            copied += 1
            if copied >= max_files:
                return


def _full(path: str) -> str | None:
    st = os.statvfs(path)
    if st.f_favail == 0:
        return "files"
    if st.f_bavail == 0:
        return "space"
    return None


def _status(wait_status: int) -> int:
    """Like subprocess: the exit code, or minus the signal that ended the command."""
    if os.WIFSIGNALED(wait_status):
        return -os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)


def _run(command: list[str]) -> int:
    """Run the command in a process group of its own; SIGTERM kills that group. Returns the wait status."""
    child: list[int] = []

    def kill(*_: object) -> None:
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child[0], signal.SIGKILL)

    signal.signal(signal.SIGTERM, kill)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})  # a SIGTERM now waits until `child` is known
    pid = os.fork()
    if pid == 0:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # we die before bwrap is up: so does the command
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        os.setsid()
        try:
            os.execvp(command[0], command)
        finally:  # not found: the child must not go on as a copy of this script
            os._exit(127)
    child.append(pid)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    _, wait_status = os.waitpid(pid, 0)  # retried after a signal (PEP 475)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    return wait_status


def main(spec: dict, command: list[str]) -> int:
    base, run_uid = spec["base"], spec["run_uid"]
    with open(os.path.join(base, spec["script"]), "rb") as handle:
        code = handle.read()
    _drop_to(run_uid)
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # the tool's process died: so do we (and the sandbox)
    _private_mount_namespace()
    for mount in spec["mounts"]:
        _mount_tmpfs(os.path.join(base, mount["folder"]), mount["bytes"], mount["inodes"], run_uid)
    work = os.path.join(base, spec["work"])
    with open(os.path.join(work, spec["script"]), "wb") as handle:
        handle.write(code)
    wait_status = _run(command)
    full = _full(work)
    _copy_out(work, os.path.join(base, spec["out"]), spec["script"], spec["max_files"], spec["max_file_bytes"])
    status = _status(wait_status)
    with open(os.path.join(base, spec["state"], RESULT), "w") as handle:
        json.dump({"exit_code": status, "full": full}, handle)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    try:
        sys.exit(main(json.loads(sys.argv[1]), sys.argv[sys.argv.index("--") + 1:]))
    except (WorkFsError, OSError) as exc:
        print(f"sandbox folders: {exc}", file=sys.stderr)
        sys.exit(125)
