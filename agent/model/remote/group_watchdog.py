"""Stopping a process group, and a watchdog that stops it when the process that started it dies.

`VLLMServer` starts vLLM in a session of its own (so the API server's engine and worker processes can be
stopped together, and a Ctrl-C at the terminal reaches only deepresearch, which stops them in order). That
group outlives its starter when the starter cannot run its own stop: killed with SIGKILL, by the OOM killer,
or crashed. So next to it runs this file, `python -I group_watchdog.py STARTER_PID GROUP_ID`, in a session
of its own too: while the group lives it checks each half second that its parent is still the starter, and
once the starter is gone it stops the group (SIGTERM, then SIGKILL after a grace). It exits by itself once
the group is gone. Standard library only (-I keeps this directory off sys.path).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(group: int, grace_s: float, reap: Callable[[], object] = lambda: None) -> bool:
    """SIGTERM every process of `group`, then SIGKILL whatever of it is left after `grace_s`; True if it had
    to. `reap` collects the leader when it is the caller's child (a zombie still counts as a member)."""
    if not group_alive(group):
        reap()
        return False
    try:
        os.killpg(group, signal.SIGTERM)
    except ProcessLookupError:
        reap()
        return False
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and group_alive(group):
        reap()
        time.sleep(0.1)
    if not group_alive(group):
        return False
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def watch(starter: int, group: int, grace_s: float = 10.0, poll_s: float = 0.5) -> bool:
    """Wait while `group` lives and this process's parent is `starter`; stop the group if the starter is
    gone first (True). A starter already gone when this begins (getppid is then init or a subreaper) counts."""
    while group_alive(group):
        if os.getppid() != starter:
            stop_group(group, grace_s)
            return True
        time.sleep(poll_s)
    return False


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the starter's death (or SIGTERM/SIGKILL) ends it early
    watch(int(sys.argv[1]), int(sys.argv[2]))
