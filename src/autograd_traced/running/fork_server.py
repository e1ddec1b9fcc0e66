"""Run work in a fresh fork of one pristine process: isolation for about the cost of a fork.

`ForkServer.start(preload)` forks a server process ("zygote") before anything has run; the
server imports what the work needs (torch) while the caller goes on with its own work. For
every call it forks a child of its own, which does the work and exits, so nothing the work
changes in its process (torch's settings, the current directory, imported modules,
environment variables...) can reach the next call, the caller or a later `mkdocs serve`
rebuild. Calls may run at the same time, one child each.

A server can have branches (`branch(name, preload)`): a server forked from it, which imports
more before it serves. Work that needs a heavy import most calls do without (an optimizer's
first step imports torch._dynamo) runs there, and calls that need it share one import, while
the others never have it: what a call starts from depends on what the caller sends it, never
on which calls ran before.

The child reports steps as it goes (`report(where, seconds)`): each step has a time limit,
enforced from outside, so even a loop inside a C extension is stopped. The caller gets the
work's result, or an exception that names the step that was running. Steps travel on a
socket of their own that the caller reads when it looks at the clock (every POLL seconds)
or hears from the child: a page reports a step before each example, thousands a build, and
waking the caller for each cost a twentieth of a 40-page build.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pickle
import select
import signal
import socket
import struct
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from autograd_traced.running import processes

Report = Callable[[str, float], None]
Ask = Callable[[str, object], object]

_HEADER = struct.Struct("!Q")


class StepFailed(Exception):
    """The child did not finish a step: `where` names it, the message says why."""

    def __init__(self, where: str, message: str) -> None:
        super().__init__(message)
        self.where = where


class StepTimedOut(StepFailed):
    pass


class ChildDied(StepFailed):
    pass


class ProtocolError(StepFailed):
    """The child sent something that is not a message: too large, not JSON, not a list."""


def _malformed(where: str, error: Exception) -> ProtocolError:
    """A message (a step or any other) that the caller cannot read, in the same words."""
    return ProtocolError(where, f"its process sent a malformed message: {error}")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while a child was working: the message names the step it was running."""


MAX_MESSAGE = 64 << 20  # bytes: a child cannot make the caller allocate more for one message


class _Channel:
    """Length-prefixed messages over a socket. The caller pickles (its work, its answers) to
    the child; the child sends JSON only: unpickling what a child sent would run whatever
    code the child chose, in the caller's process.

    The caller reads ahead: each read of the socket releases the build's GIL, which its main
    thread (converting pages) holds for up to a switch interval before this thread gets it
    back, so one read takes every message that has arrived (a page's steps, thousands a
    build, all of them at a look: `take_arrived`). The child reads exactly what it asked
    for: a branch's first message is followed, on the same socket, by control messages
    that carry file descriptors, which a read ahead would swallow."""

    def __init__(self, sock: socket.socket, *, child: bool) -> None:
        self.sock = sock
        self.child = child
        self._ahead = bytearray()  # read, not yet taken (the caller's side only)

    def send(self, message: object) -> None:
        if self.child:
            data = json.dumps(message).encode()
        else:
            data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.sock.sendall(_HEADER.pack(len(data)) + data)

    def take_arrived(self) -> Iterator[Any]:
        """The whole messages that have arrived, without waiting for more (the caller's side):
        a message begun is taken once it has all arrived. A malformed one raises where it
        stands, after the ones before it were taken."""
        self.sock.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            for _ in range(_TAKEN_AT_ONCE):  # a child that never stops writing: later
                chunk = self.sock.recv(_AHEAD)
                self._ahead += chunk
                if len(chunk) < _AHEAD:  # all there was (or the end: the child has gone)
                    break
        while self.has_message():
            yield self.receive(None)
        if len(self._ahead) >= _HEADER.size and _HEADER.unpack_from(self._ahead)[0] > MAX_MESSAGE:
            self.receive(None)  # raises: a message too large to wait for

    def has_message(self) -> bool:
        """Whether a whole message was read ahead: `receive` returns without reading."""
        if len(self._ahead) < _HEADER.size:
            return False
        (size,) = _HEADER.unpack_from(self._ahead)
        return len(self._ahead) - _HEADER.size >= size

    def receive(self, deadline: float | None) -> Any:
        (size,) = _HEADER.unpack(self._read(_HEADER.size, deadline))
        if self.child:
            return pickle.loads(self._read(size, deadline))  # from the caller: trusted
        if size > MAX_MESSAGE:
            raise ValueError(f"a message of {size} bytes (at most {MAX_MESSAGE})")
        message = json.loads(self._read(size, deadline))
        if not isinstance(message, list) or not message or not isinstance(message[0], str):
            raise ValueError(f"not a message: {message!r:.200}")
        return message

    def _read(self, size: int, deadline: float | None) -> bytes:
        while len(self._ahead) < size:
            missing = size - len(self._ahead)
            self.sock.settimeout(None if deadline is None else max(deadline - time.monotonic(), 0))
            chunk = self.sock.recv(min(missing if self.child else max(missing, _AHEAD), 1 << 20))
            if not chunk:
                raise EOFError
            self._ahead += chunk
        data = bytes(self._ahead[:size])
        del self._ahead[:size]
        return data


_AHEAD = 1 << 16  # bytes the caller asks for at once: many step reports
_TAKEN_AT_ONCE = 16  # reads of a child's steps at one look: a megabyte, ten thousand steps


class _Progress:
    """The step a child is running, as its steps socket says: read when the caller looks
    (catch_up), by the thread that waits on the child or, on Ctrl-C, by another."""

    def __init__(self, where: str, steps: _Channel | None) -> None:
        self.where = where
        self.step: _Step | None = None
        self.pid = 0
        self._steps = steps
        self._lock = threading.Lock()

    def catch_up(self) -> None:
        """Take every step reported since the last look: the last one is running, its clock
        started now (it started at most a look ago: a limit is overrun by at most POLL)."""
        if self._steps is None:
            return
        with self._lock:
            try:
                for kind, *payload in self._steps.take_arrived():
                    if kind != "step" or len(payload) != 2:
                        raise ValueError(f"not a step: {[kind, *payload]!r:.200}")
                    self.where, limit = str(payload[0]), float(payload[1])
                    self.step = _Step(self.pid, limit)
            except (TypeError, ValueError) as error:  # JSON's errors are ValueErrors too
                raise _malformed(self.where, error) from None

    def overdue(self) -> str:
        return "" if self.step is None else self.step.overdue()

    def latest(self) -> str:
        """The step running now, for another thread (Ctrl-C): what it sent reads as sent."""
        with contextlib.suppress(StepFailed, OSError):
            self.catch_up()
        return self.where


class ForkServer:
    def __init__(self, pid: int, control: socket.socket, *, trunk: ForkServer | None = None):
        self.pid = pid
        self._control = control
        self._trunk = trunk  # the server this one was forked from, if it is a branch
        self._lock = threading.Lock()
        self._running: dict[int, _Progress] = {}  # child pid -> the step it is running
        self._interrupts = 0  # Ctrl-Cs so far: a child forked across one is stopped too
        self._branches: dict[str, ForkServer] = {}
        self._branches_lock = threading.Lock()

    @classmethod
    def start(cls, preload: Callable[[], None] | None = None) -> ForkServer:
        """Fork the server; it runs `preload` (imports every child then has) before serving."""
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the server
            ours.close()
            processes.close_inherited(keep={theirs.fileno()})
            try:
                if preload is not None:
                    preload()
                _serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        return cls(pid, ours)

    def branch(self, name: str, preload: Callable[[], None]) -> ForkServer:
        """This server's branch `name`, forked on first use: a server that runs `preload`
        (after everything this one imported) before it serves, while this one goes on."""
        with self._branches_lock:
            branch = self._branches.get(name)
            if branch is None or not branch.alive():
                starting = f"the {name} server (starting)"
                ours, steps = self._ask_for_child(b"b", starting)
                steps.close()  # a branch serves: it reports no steps
                channel = _Channel(ours, child=False)
                try:
                    pid = self._receive(channel, _Progress(starting, None))[1]
                    channel.send(preload)
                except BaseException:
                    channel.sock.close()
                    raise
                branch = self._branches[name] = ForkServer(pid, channel.sock, trunk=self)
            return branch

    def alive(self) -> bool:
        if self._trunk is not None:  # the trunk's child, not this process's: it reaps it
            return self._trunk.alive() and processes.running(self.pid)
        try:
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            return False

    def stop(self, timeout: float = 5.0) -> None:
        """Close the server and wait for it; it waits for its children (branches too) first.
        One still running after `timeout` (work no caller is waiting for) is stopped: SIGTERM
        makes the server kill its pages and all they started."""
        for branch in self._branch_list():
            branch.stop()  # it exits; the server waits for it
        self._control.close()  # the server exits when its end reads nothing
        if self._trunk is not None:
            return
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGTERM)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(self.pid, 0)
                return
            time.sleep(0.01)

    def interrupt(self) -> list[str]:
        """Stop every child (Ctrl-C while waiting on several); the steps they were running."""
        with self._lock:
            self._interrupts += 1
            running = dict(self._running)
        for pid in running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return sorted(
            [
                *(progress.latest() for progress in running.values()),
                *(where for b in self._branch_list() for where in b.interrupt()),
            ]
        )

    def running_steps(self) -> list[str]:
        """The steps this server's children (and its branches') are running now."""
        with self._lock:
            running = list(self._running.values())
        return sorted(
            [
                *(progress.latest() for progress in running),
                *(where for b in self._branch_list() for where in b.running_steps()),
            ]
        )

    def _branch_list(self) -> list[ForkServer]:
        with self._branches_lock:
            return list(self._branches.values())

    def call(
        self,
        function: Callable[..., Any],
        *args: Any,
        answers: Mapping[str, Callable[[Any], Any]] | None = None,
        starting: str = "(starting)",
    ) -> Any:
        """`function(*args, report=..., ask=...)` in a fresh child; its return value, or
        StepFailed. `starting` names the work until its first step is reported.

        Before the first report the work has no time limit; after `report(where, seconds)`
        the child must report again or finish within `seconds`. `ask(topic, payload)` in the
        child returns `answers[topic](payload)`, computed here: what this process keeps
        (a cache) serves every child.
        """
        with self._lock:
            interrupts = self._interrupts
        ours, steps = self._ask_for_child(b"c", starting)
        channel = _Channel(ours, child=False)
        progress = _Progress(starting, _Channel(steps, child=False))
        pid = 0
        try:
            # The server, not the child, says which process this is: it is killed at the end.
            try:
                pid = progress.pid = self._receive(channel, progress)[1]
            except ChildDied:  # no child was forked: the server died as it got the request
                raise ChildDied(starting, "the page's server has ended") from None
            with self._lock:
                if self._interrupts != interrupts:  # Ctrl-C came as it was being forked
                    raise Interrupted(f"interrupted while starting {starting}")
                self._running[pid] = progress
            channel.send((function, args))
            while True:
                kind, *payload = self._receive(channel, progress)
                if kind == "ask" and len(payload) == 2:
                    topic, question = payload
                    try:
                        channel.send(("answer", True, (answers or {})[topic](question)))
                    except Exception as error:
                        channel.send(("answer", False, str(error)))
                elif kind == "result" and len(payload) == 1:
                    return payload[0]
                elif kind == "crash" and len(payload) == 1:  # the work itself raised
                    raise StepFailed(progress.where, str(payload[0]))
                elif kind == "ended" and len(payload) == 1:  # the server's word: it died
                    raise ChildDied(progress.where, f"the page's process {payload[0]}")
                else:
                    raise ProtocolError(progress.where, f"an unknown message: {kind!r:.200}")
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted while running {progress.where}") from None
        finally:
            if pid:
                with self._lock:
                    self._running.pop(pid, None)
                processes.kill_group(pid)  # a child that finished, and all it started
            ours.close()
            steps.close()

    def _ask_for_child(self, kind: bytes, starting: str) -> tuple[socket.socket, socket.socket]:
        """Ask the server for a child of `kind` (b"c" a call, b"b" a branch); our ends of the
        sockets it will talk and report its steps on."""
        ours, theirs = socket.socketpair()
        our_steps, their_steps = socket.socketpair()
        with self._lock, theirs, their_steps:
            try:
                socket.send_fds(self._control, [kind], [theirs.fileno(), their_steps.fileno()])
            except OSError:  # the server was killed (a page may kill its own server)
                ours.close()
                our_steps.close()
                raise ChildDied(starting, "the page's server has ended") from None
        return ours, our_steps

    @staticmethod
    def _receive(channel: _Channel, progress: _Progress) -> Any:
        """The child's next message; its steps are caught up on at every look at the clock,
        and once more when a message has begun (the child sent its steps before it): a
        failure names the step that was running."""
        try:
            while not channel.has_message() and not _readable(channel.sock, POLL):
                progress.catch_up()
                if overdue := progress.overdue():
                    raise StepTimedOut(progress.where, overdue)
            progress.catch_up()
            # A message has begun: the rest of it may not take longer than the step may.
            step = progress.step
            return channel.receive(None if step is None else step.last_moment)
        except TimeoutError:
            raise StepTimedOut(progress.where, "timed out in the middle of a message") from None
        except (EOFError, ConnectionResetError):  # the server has gone too
            raise ChildDied(progress.where, "the page's process ended abruptly") from None
        except ValueError as error:  # JSON's errors are ValueErrors too
            raise _malformed(progress.where, error) from None


POLL = 0.1  # seconds between looks at a step's clock while its page says nothing
WAITING = 5  # a step may take this many times its limit in wall time, sleeping or waiting on
# I/O (waiting for a core is not counted); its own CPU time may not exceed the limit.


class _Step:
    """One step's clock: the CPU time its page's process uses (every thread, and children
    it waited for), and a backstop in wall time that leaves out the time it spent ready to
    run while other processes had the cores. A page that starves the others uses CPU and is
    the one stopped; a page it starves is charged neither for its wait nor for its CPU.

    The clock reads /proc from the first look at it, POLL seconds into the step: most steps
    end sooner and read nothing (two reads per step were a tenth of a 40-page build's own
    CPU), for a limit that can be overrun by at most POLL seconds."""

    def __init__(self, pid: int, limit: float) -> None:
        self.pid, self.limit = pid, limit
        self.started = time.monotonic()
        self._since: tuple[float, float] | None = None  # (CPU, queued) at the first look

    def _baseline(self) -> tuple[float, float]:
        if self._since is None:
            self._since = processes.cpu_seconds(self.pid), processes.queued_seconds(self.pid)
        return self._since

    @property
    def last_moment(self) -> float:
        starved = 0.0  # before the first look, none counted: the clock has not read it
        if self._since is not None:
            starved = processes.queued_seconds(self.pid) - self._since[1]
        return self.started + self.limit * WAITING + starved

    def overdue(self) -> str:
        if processes.cpu_seconds(self.pid) - self._baseline()[0] > self.limit:
            return f"timed out after {self.limit:g} s of CPU time"
        if time.monotonic() > self.last_moment:
            return (
                f"timed out after {self.limit * WAITING:g} s of wall time, {WAITING} times its "
                f"limit of {self.limit:g} s (it slept, or waited on something)"
            )
        return ""


def _readable(sock: socket.socket, seconds: float) -> bool:
    return bool(select.select([sock], [], [], seconds)[0])


def _serve(control: socket.socket) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to report
    # A build killed in any way takes the server with it, and the server every page's group.
    processes.die_with_parent(signal.SIGTERM)
    processes.adopt_orphans()  # what a page started and left behind comes back here
    pages: dict[int, socket.socket] = {}  # page pid -> its caller's socket, until reaped

    def stop(*_: object) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # this loop reaps
        for pid in pages:
            processes.kill_group(pid)
        # A page hands what it started in another session to this process only as it dies,
        # after the kill above: kill every child, wait for one, again, until none is left.
        while True:
            processes.kill_orphans(())
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                os._exit(0)

    signal.signal(signal.SIGCHLD, lambda *_: _reap(pages, block=False))
    signal.signal(signal.SIGTERM, stop)
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1, 2)
        if not message:
            _reap(pages, block=True)
            return
        go_read, go_write = os.pipe()
        # Not reaped until it is known as a page: an orphan hunt would kill it meanwhile.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        pid = os.fork()
        if pid == 0:
            control.close()
            for other in pages.values():  # a page could forge another page's messages on it
                other.close()
            os.close(go_write)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the page's own children are its own
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            os.setpgid(0, 0)  # a group of its own: what it starts is killed with it
            processes.die_with_parent()
            try:
                os.read(go_read, 1)  # until the server has said who this is
                with socket.socket(fileno=fds[0]) as sock, socket.socket(fileno=fds[1]) as steps:
                    if message == b"b":  # a branch: a server of its own, that imports more
                        steps.close()
                        preload = _Channel(sock, child=True).receive(None)
                        preload()
                        _serve(sock)
                    else:
                        _work(_Channel(sock, child=True), _Channel(steps, child=True))
            finally:
                os._exit(0)
        with contextlib.suppress(OSError):  # also here: the group exists before the caller
            os.setpgid(pid, pid)  # may kill it, whichever process runs first
        # Kept open until the page is reaped: then the caller hears how it ended.
        pages[pid] = socket.socket(fileno=fds[0])
        os.close(fds[1])  # the page's alone: no later page inherits it
        os.close(go_read)
        _Channel(pages[pid], child=True).send(["pid", pid])
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        os.close(go_write)


def _reap(pages: dict[int, socket.socket], *, block: bool) -> None:
    """Wait for the children that ended (every page, when `block`); a page that ended has
    its group and every orphan killed, and its caller is told how it ended. A child waited
    for adds its CPU time to this process's, and so to the build's and the benchmark's
    `getrusage` (its cores used)."""
    while True:
        try:
            pid, status = os.waitpid(-1, 0 if block and pages else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid in pages:
            sock = pages.pop(pid)
            processes.kill_group(pid)
            processes.kill_orphans(pages)
            with sock, contextlib.suppress(OSError):  # a caller that has its result is gone
                _Channel(sock, child=True).send(["ended", processes.how_it_ended(status)])


def _work(channel: _Channel, steps: _Channel) -> None:
    function, args = channel.receive(None)

    def report(where: str, seconds: float) -> None:
        steps.send(["step", where, seconds])

    def ask(topic: str, question: object) -> object:
        channel.send(["ask", topic, question])
        _, ok, answer = channel.receive(None)
        if not ok:
            raise RuntimeError(answer)
        return answer

    try:
        result = function(*args, report=report, ask=ask)
    except BaseException:  # the caller decides what a failure means; this process ends anyway
        channel.send(["crash", traceback.format_exc()])
        return
    try:
        channel.send(["result", result])
    except TypeError as error:  # not JSON: a bug in the work, reported as its crash
        channel.send(["crash", f"its result is not plain data: {error}"])


_shared: ForkServer | None = None
_shared_lock = threading.Lock()


def interrupt_shared() -> list[str]:
    """Ctrl-C: stop every child of this process's server, if it has one; the steps they ran."""
    return [] if _shared is None else _shared.interrupt()


def shared(preload: Callable[[], None] | None = None) -> ForkServer:
    """The process's fork server, started on first use with `preload`.

    Start it early, from the main thread: a fork made while another thread holds a lock
    (torch's lazy initialisation has some) leaves that lock held forever in the child.
    """
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.alive():
            _shared = ForkServer.start(preload)
            atexit.register(_shared.stop)  # waited for, with its children: their CPU is ours
        return _shared
