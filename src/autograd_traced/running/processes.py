"""Processes a page starts die with it: Linux's process groups, parent-death signals and
child subreapers, for the fork server and the pages it forks.

A page's process leads a group of its own, so whatever it starts (a `subprocess.Popen`, a
forked loop) is in that group and is killed with it. A process that leaves the group (a new
session, a double fork) is an orphan when its parent ends; the server adopts orphans
(subreaper) and kills every one. Each level dies when the one above it does (a parent-death
signal): even a `kill -9` of the build sends the server a SIGTERM, on which it kills every
page's group and every orphan before it exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent(how: signal.Signals = signal.SIGKILL) -> None:
    """Send `how` to this process when the thread that forked it ends (its parent dies)."""
    parent = os.getppid()
    _libc.prctl(_PR_SET_PDEATHSIG, how)
    if os.getppid() != parent:  # the parent died before the signal was asked for
        os._exit(1)


def adopt_orphans() -> None:
    """Become the parent of every orphaned descendant, instead of PID 1."""
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)


def kill_group(leader: int) -> None:
    """Kill the process group `leader` leads, and the leader (it may not have made one yet)."""
    for kill, target in ((os.killpg, leader), (os.kill, leader)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(target, signal.SIGKILL)


def children_of(parent: int) -> list[int]:
    """The processes whose parent is `parent`, read from /proc."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            # "pid (command) state ppid ...": the command may hold spaces and parentheses.
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                children.append(int(stat.parent.name))
    return children


def kill_orphans(pages: set[int]) -> None:
    """Kill this process's children that are not pages: orphans it adopted."""
    for pid in children_of(os.getpid()):
        if pid not in pages:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
