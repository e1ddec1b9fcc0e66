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
import resource
import signal
import sys
from collections.abc import Container
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


def close_inherited(keep: Container[int]) -> None:
    """Point every descriptor this forked process inherited, but stdio and `keep`, at
    /dev/null: what the parent had open (`mkdocs serve`'s listening socket, a pipe to a
    helper, another page's channel) is not a page's to use. The numbers stay taken, so an
    object that still holds one closes /dev/null, never a descriptor opened since."""
    inherited = [int(name) for name in os.listdir("/proc/self/fd")]
    null = os.open(os.devnull, os.O_RDWR)
    for fd in inherited:
        if fd > 2 and fd != null and fd not in keep:
            try:
                os.fstat(fd)
            except OSError:  # the listing's own, closed since
                continue
            os.dup2(null, fd)
    os.close(null)


def send_output_to(path: str) -> None:
    """Everything this process and what it starts write to stdout and stderr (a warning, a
    write to fd 2, a child's output) goes to the file `path`, never to the build's terminal."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


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


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has: it waits to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """The CPU time `pid` used: all its threads, and the children it waited for (0 once it
    is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # After ")": state is field 3 of proc(5); utime, stime, cutime and cstime are 14 to 17.
    return sum(int(value) for value in fields[11:15]) / _TICKS


def queued_seconds(pid: int) -> float:
    """How long `pid`'s main thread has been ready to run while other processes had the
    cores (the scheduler's run delay; 0 where the kernel does not say)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def how_it_ended(status: int) -> str:
    """A wait status in words: "was killed by SIGSEGV", "exited with status 3"."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        name = signal.Signals(number).name if number in signal.valid_signals() else number
        cause = {"SIGKILL": " (killed from outside, or out of memory)"}.get(str(name), "")
        return f"was killed by {name}{cause}"
    code = os.waitstatus_to_exitcode(status)
    return f"exited with status {code} before it finished (os._exit, sys.exit in a thread...)"


def limit_memory(mebibytes: int) -> None:
    """Let this process map at most `mebibytes` more than it has mapped now (each process it
    starts likewise): an allocation past it raises MemoryError instead of taking the machine.
    The hard limit too, so a snippet cannot raise it again."""
    mapped = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = mapped + (mebibytes << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def kill_orphans(pages: Container[int]) -> None:
    """Kill this process's children that are not pages: orphans it adopted."""
    for pid in children_of(os.getpid()):
        if pid not in pages:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
_CAP_SYS_ADMIN = 21
_PR_CAPBSET_DROP = 24
_CAPABILITY_VERSION_3 = 0x20080522


def read_only(folder: str) -> bool:
    """Make `folder` read-only for this process and what it starts (a mount namespace of its
    own; for a user other than root, inside a user namespace of its own, where it may mount),
    then give up the right to mount again; False where Linux allows neither, and the build's
    source guard is what remains."""
    flags = (_MS_REC | _MS_PRIVATE, _MS_BIND | _MS_REC, _MS_BIND | _MS_REMOUNT | _MS_RDONLY)
    if _libc.unshare(_CLONE_NEWNS) != 0 and not _own_user_namespace():
        return False
    mounts = ((b"none", b"/", flags[0]), (folder.encode(), folder.encode(), flags[1]))
    mounts += ((b"none", folder.encode(), flags[2]),)
    for source, target, flag in mounts:
        if _libc.mount(source, target, None, flag, None) != 0:
            return False
    _drop_sys_admin()
    return True


def _own_user_namespace() -> bool:
    """Enter a user namespace (and a mount namespace) where this user is itself, and may
    mount; this process must not have started a thread yet."""
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
        return False
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        Path(f"/proc/self/{name}").write_text(text)
    return True


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def _drop_sys_admin() -> None:
    # Without CAP_SYS_ADMIN, a snippet cannot remount the folder writable, here or in a child.
    _libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_ADMIN)
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if _libc.capget(ctypes.byref(header), data) != 0:
        return
    keep = ~(1 << _CAP_SYS_ADMIN) & 0xFFFFFFFF
    data[0].effective &= keep
    data[0].permitted &= keep
    data[0].inheritable &= keep
    _libc.capset(ctypes.byref(header), data)
