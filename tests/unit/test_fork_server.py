"""The fork server: each call in a fresh child, time limits, crashes and Ctrl-C named."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autograd_traced.running import fork_server
from autograd_traced.running.processes import children_of
from benchmarks.harness import children_cpu
from tests.support.live_processes import running


def set_and_read(key: str, *, report: Callable[[str, float], None], **_: object) -> str | None:
    before = os.environ.get(key)
    os.environ[key] = "leaked"
    return before


SLOW = "snippets/slow.pycon:2 (used by docs/slow.md:3)"


def sleep(
    seconds: float, limit: float = 0.5, *, report: Callable[[str, float], None], **_: object
) -> None:
    report(SLOW, limit)
    time.sleep(seconds)


def exit_abruptly(*, report: Callable[[str, float], None], **_: object) -> None:
    report("snippets/exit.pycon:1 (used by docs/exit.md:1)", 10)
    os._exit(3)


def fail(*, report: Callable[[str, float], None], **_: object) -> None:
    report("step one", 10)
    raise ValueError("the work raised")


def test_each_call_starts_from_the_servers_state() -> None:
    server = fork_server.shared()
    assert server.call(set_and_read, "AUTOGRAD_TRACED_PROBE") is None
    assert server.call(set_and_read, "AUTOGRAD_TRACED_PROBE") is None  # not "leaked"
    assert "AUTOGRAD_TRACED_PROBE" not in os.environ


def spin_reported(
    seconds: float, limit: float, *, report: Callable[[str, float], None], **_: object
) -> None:
    report("snippets/spin.pycon:2 (used by docs/spin.md:3)", limit)
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_step_over_its_cpu_time_is_stopped_and_named() -> None:
    # Stopped, not finished: the work would return after 30 s of CPU time.
    with pytest.raises(fork_server.StepTimedOut, match=r"timed out after 0\.5 s of CPU") as raised:
        fork_server.shared().call(spin_reported, 30, 0.5)
    assert raised.value.where == "snippets/spin.pycon:2 (used by docs/spin.md:3)"


def test_a_step_that_waits_is_stopped_at_its_wall_time_backstop() -> None:
    with pytest.raises(fork_server.StepTimedOut, match=r"after 2\.5 s of wall time, 5 times"):
        fork_server.shared().call(sleep, 30)


def test_a_step_that_sleeps_past_its_limit_within_its_backstop_passes() -> None:
    fork_server.shared().call(sleep, 1.0, 0.5)  # it used no CPU time


def spin_on_core_0(
    seconds: float, limit: float, *, report: Callable[[str, float], None], **_: object
) -> None:
    os.sched_setaffinity(0, {0})
    spin_reported(seconds, limit, report=report)


HOG = "import os; os.sched_setaffinity(0, {0})\nwhile True: pass"


def test_a_step_another_page_starves_is_not_blamed_for_its_wait() -> None:
    # 0.3 s of CPU beside 12 hogs on its core takes about 4 s: past the 2.5 s backstop of
    # its 0.5 s limit, but it waited for the core, and that wait is not charged.
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(12)]
    try:
        fork_server.shared().call(spin_on_core_0, 0.3, 0.5)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_a_child_that_dies_is_named() -> None:
    with pytest.raises(fork_server.ChildDied, match="process exited with status 3") as raised:
        fork_server.shared().call(exit_abruptly)
    assert raised.value.where.startswith("snippets/exit.pycon:1")


def test_an_exception_in_the_work_is_reported_with_its_traceback() -> None:
    with pytest.raises(fork_server.StepFailed, match="ValueError: the work raised") as raised:
        fork_server.shared().call(fail)
    assert raised.value.where == "step one"


@pytest.fixture
def ctrl_c() -> Iterator[Callable[[str], None]]:
    """Press Ctrl-C on this process once the shared fork server runs the step `where` (on a
    loaded machine, torch's import may come first). Python raises KeyboardInterrupt for it
    even when started with SIGINT ignored (as `cmd &` in a non-interactive shell starts it)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    done = threading.Event()

    def press(where: str) -> None:
        def when_running() -> None:
            while not done.wait(0.05):
                server = fork_server._shared
                if server is not None and where in server.running_steps():
                    os.kill(os.getpid(), signal.SIGINT)
                    return

        threading.Thread(target=when_running, daemon=True).start()

    try:
        yield press
    finally:
        done.set()
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_names_the_step_that_was_running(ctrl_c) -> None:
    ctrl_c(SLOW)
    with pytest.raises(fork_server.Interrupted, match=r"running snippets/slow\.pycon:2"):
        fork_server.shared().call(sleep, 5, 10)  # inside its limit


def test_ctrl_c_while_waiting_on_pages_in_parallel_stops_and_names_them(tmp_path, ctrl_c) -> None:
    from autograd_traced.running.pages import PageRunner
    from autograd_traced.running.plan import Settings, plan_page

    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "slow.pycon").write_text(">>> import time\n>>> time.sleep(30)\n")
    plans = [plan_page(tmp_path, f"docs/{name}.md", PAGE, Settings()) for name in ("one", "two")]
    runner = PageRunner()
    runner.prefetch(plans)
    ctrl_c("snippets/slow.pycon:2 (used by docs/one.md:1)")
    start = time.monotonic()
    with pytest.raises(fork_server.Interrupted) as raised:
        runner.run_page(plans[0])
    assert "snippets/slow.pycon:2 (used by docs/one.md:1)" in str(raised.value)
    assert time.monotonic() - start < 10
    # The other page is stopped too, even one whose process was being forked as Ctrl-C came:
    # left running, it would hold the source guard's walks for 30 s of the tests after this.
    deadline = time.monotonic() + 10
    while not runner.ready(plans[1]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert runner.ready(plans[1]), "the other page ran on after Ctrl-C"


PAGE = '```pycon exec="on" file="snippets/slow.pycon"\n```\n'


def ask_twice(*, report: Callable[[str, float], None], ask: Callable[[str, object], object]):
    return ask("double", 21), ask("double", "x")


def test_a_child_asks_the_caller_and_gets_its_answer_or_its_error() -> None:
    def double(value: object) -> object:
        if not isinstance(value, int):
            raise TypeError("not a number")
        return value * 2

    with pytest.raises(fork_server.StepFailed, match="RuntimeError: not a number"):
        fork_server.shared().call(ask_twice, answers={"double": double})


def spin(seconds: float, **_: object) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def nap(seconds: float, **_: object) -> None:
    time.sleep(seconds)


def test_the_work_of_the_children_counts_as_this_processs_children_cpu() -> None:
    # The benchmark's "cores used" reads this very figure: children the server did not wait
    # for would be missing from it.
    before = children_cpu()
    server = fork_server.ForkServer.start()
    server.call(spin, 0.4)
    server.call(spin, 0.4)
    server.stop()
    assert children_cpu() - before >= 0.75


def test_stopping_does_not_hang_on_work_no_one_waits_for() -> None:
    server = fork_server.ForkServer.start()

    def call() -> None:
        with contextlib.suppress(fork_server.ChildDied):  # its server is killed under it
            server.call(nap, 3)

    threading.Thread(target=call, daemon=True).start()
    time.sleep(0.3)  # the child is napping
    start = time.monotonic()
    server.stop(timeout=0.5)
    assert time.monotonic() - start < 2
    assert not server.alive()


KILLED_CALLER = """
import subprocess, sys
from autograd_traced.running.fork_server import ForkServer

def start_and_loop(*, report, ask):
    sleep = [sys.executable, "-c", "import time; time.sleep(1000)"]
    subprocess.Popen([*sleep, "autograd-traced-killed-caller-1"])
    subprocess.Popen([*sleep, "autograd-traced-killed-caller-2"], start_new_session=True)
    report("snippets/loop.pycon:1 (used by docs/loop.md:3)", 600)
    print("looping", flush=True)
    while True:
        pass

ForkServer.start().call(start_and_loop)
"""


def test_a_caller_killed_with_sigkill_takes_its_pages_and_all_they_started() -> None:
    caller = subprocess.Popen([sys.executable, "-c", KILLED_CALLER], stdout=subprocess.PIPE)
    assert caller.stdout is not None and caller.stdout.readline() == b"looping\n"
    server_and_page = children_of(caller.pid)
    server_and_page += [pid for server in server_and_page for pid in children_of(server)]
    caller.kill()
    caller.wait()
    deadline = time.monotonic() + 10
    while (left := running(("autograd-traced-killed-caller-",)) + alive(server_and_page)) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    assert not left


def alive(pids: list[int]) -> list[str]:
    return [
        str(pid)
        for pid in pids
        if Path(f"/proc/{pid}/cmdline").exists() and Path(f"/proc/{pid}/cmdline").read_bytes()
    ]


def crash(*, report: Callable[[str, float], None], **_: object) -> None:
    report("snippets/crash.pycon:2 (used by docs/crash.md:3)", 10)
    os.kill(os.getpid(), signal.SIGSEGV)


def test_a_child_killed_by_a_signal_is_named_with_it() -> None:
    with pytest.raises(fork_server.ChildDied, match="process was killed by SIGSEGV") as raised:
        fork_server.shared().call(crash)
    assert raised.value.where == "snippets/crash.pycon:2 (used by docs/crash.md:3)"


def hoard(mebibytes: int, *, report: Callable[[str, float], None], **_: object) -> str:
    from autograd_traced.running.processes import limit_memory

    limit_memory(64)
    try:
        bytearray(mebibytes << 20)
    except MemoryError:
        return "refused"
    return "allowed"


def test_a_page_may_map_only_its_memory_limit_more() -> None:
    assert fork_server.shared().call(hoard, 32) == "allowed"
    assert fork_server.shared().call(hoard, 256) == "refused"


def sockets_open(*, report: Callable[[str, float], None], **_: object) -> int:
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return sum(link.startswith("socket:") for link in links)


def test_a_child_holds_no_other_callers_socket() -> None:
    """A page that held the server's end of another page's socket could send that page's
    caller a result of its own making, and one that held the caller's listening socket
    (`mkdocs serve`'s) could answer its readers: each child holds its own two only (its
    messages, its steps)."""
    listening = socket.create_server(("127.0.0.1", 0))
    server = fork_server.ForkServer.start()
    try:
        napping = threading.Thread(target=server.call, args=(nap, 1.0), daemon=True)
        napping.start()
        time.sleep(0.3)  # the other child is running, its socket open in the server
        assert server.call(sockets_open) == 2
        napping.join()
    finally:
        server.stop()
        listening.close()


def preload_marker() -> None:
    os.environ["AUTOGRAD_TRACED_BRANCH"] = str(os.getpid())


def read_marker(*, report: Callable[[str, float], None], **_: object) -> str | None:
    return os.environ.get("AUTOGRAD_TRACED_BRANCH")


def test_a_branch_preloads_once_for_its_children_only() -> None:
    server = fork_server.ForkServer.start()
    try:
        branch = server.branch("marked", preload_marker)
        assert server.branch("marked", preload_marker) is branch
        loaded_by = branch.call(read_marker)
        assert loaded_by == str(branch.pid)  # the branch's own process ran it, once
        assert branch.call(read_marker) == loaded_by
        assert server.call(read_marker) is None  # the trunk's children never have it
        assert branch.pid in children_of(server.pid)
    finally:
        server.stop()
    assert not server.alive() and not branch.alive()


def test_ctrl_c_stops_a_branchs_pages_and_names_them() -> None:
    server = fork_server.ForkServer.start()
    branch = server.branch("marked", preload_marker)
    failures: list[BaseException] = []

    def call() -> None:
        try:
            branch.call(sleep, 30, 60)
        except fork_server.StepFailed as failure:
            failures.append(failure)

    thread = threading.Thread(target=call)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.running_steps() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.interrupt() == [SLOW]
        thread.join(timeout=5)
        assert failures and isinstance(failures[0], fork_server.ChildDied)
    finally:
        server.stop()


def test_a_page_that_trains_runs_in_the_training_branch(tmp_path: Path) -> None:
    from autograd_traced.running import child, pages
    from autograd_traced.running.plan import Settings, plan_page

    (tmp_path / "snippets").mkdir()
    for name, line in [("trains", "optim.SGD([w], lr=0.1)"), ("names", "torch.optim.Optimizer")]:
        (tmp_path / "snippets" / f"{name}.pycon").write_text(f">>> {line}\n")
    page = '```pycon exec="on" file="snippets/{}.pycon"\n```\n'
    trains = plan_page(tmp_path, "docs/a.md", page.format("trains"), Settings())
    names = plan_page(tmp_path, "docs/b.md", page.format("names"), Settings())
    server = pages.start_processes()
    assert pages._server_for(trains) is server.branch("training", child.preload_training)
    assert pages._server_for(names) is server


def test_a_call_to_a_server_that_was_killed_is_named() -> None:
    """A page may kill its own server (its parent): the next call on it fails as a page's
    failure, named, not with the socket's error."""
    server = fork_server.ForkServer.start()
    branch = server.branch("marked", preload_marker)
    try:
        branch.call(read_marker)  # it serves
        os.kill(branch.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10  # until its server has reaped it, and its socket
        while Path(f"/proc/{branch.pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(fork_server.ChildDied, match="server has ended") as raised:
            branch.call(read_marker, starting="docs/a.md (starting its process)")
        assert raised.value.where == "docs/a.md (starting its process)"
        assert server.branch("marked", preload_marker) is not branch  # a new one
    finally:
        server.stop()


def test_a_branch_of_a_server_that_was_killed_is_named() -> None:
    server = fork_server.ForkServer.start()
    try:
        os.kill(server.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while server.alive() and time.monotonic() < deadline:  # reaped by alive()
            time.sleep(0.05)
        with pytest.raises(fork_server.ChildDied, match="server has ended"):
            server.branch("marked", preload_marker)
    finally:
        server.stop()


def modules_a_given_gradient_imports(*, report, ask) -> list[str]:
    import torch

    before = set(sys.modules)
    x = torch.ones(2, requires_grad=True)
    torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(2), retain_graph=True)
    (x * 3).backward(torch.ones(2))
    return sorted(set(sys.modules) - before)


def test_a_page_that_gives_a_gradient_imports_nothing_torch_lacks() -> None:
    """torch imports sympy the first time a gradient is given explicitly (0.3-0.5 s): the
    server has it, so pages that do (pitfalls, and every copy of it) do not pay it again."""
    from autograd_traced.running import pages

    server = pages.start_processes()
    assert server.call(modules_a_given_gradient_imports) == []


def test_the_training_branch_is_asked_for_before_the_pages_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its import (torch._dynamo) then runs beside the pages before the one that trains."""
    from autograd_traced.running import pages
    from autograd_traced.running.plan import PageRun, Settings, plan_page

    (tmp_path / "snippets").mkdir()
    for name, line in [("trains", "optim.SGD([w], lr=0.1)"), ("plain", "1 + 1")]:
        (tmp_path / "snippets" / f"{name}.pycon").write_text(f">>> {line}\n")
    page = '```pycon exec="on" file="snippets/{}.pycon"\n```\n'
    plans = [
        plan_page(tmp_path, f"docs/{name}.md", page.format(name), Settings())
        for name in ("plain", "trains")
    ]
    calls: list[str] = []
    monkeypatch.setattr(pages.os, "cpu_count", lambda: 1)  # one worker: tasks run in order
    monkeypatch.setattr(pages, "start_processes", lambda: None)
    monkeypatch.setattr(pages, "_server_for", lambda plan: calls.append(f"server {plan.page}"))

    def execute(plan, stages, cache) -> PageRun:
        calls.append(f"run {plan.page}")
        return PageRun(plan, ())

    monkeypatch.setattr(pages, "_execute", execute)
    runner = pages.PageRunner()
    runner.prefetch(plans)
    for plan in plans:
        runner.run_page(plan)
    assert calls == ["server docs/trains.md", "run docs/plain.md", "run docs/trains.md"]


def test_the_caller_takes_every_message_that_has_arrived_in_one_read() -> None:
    """A page reports a step before each example: the build's side reads them all at once
    (each read releases its GIL), and hands them over one by one, whole."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        child = fork_server._Channel(theirs, child=True)
        for step in range(3):
            child.send(["step", f"snippets/a.pycon:{step + 1}", 5.0])
        caller = fork_server._Channel(ours, child=False)
        time.sleep(0.05)  # all three have arrived
        assert caller.receive(None) == ["step", "snippets/a.pycon:1", 5.0]
        assert caller.has_message()  # read with the first: no read of the socket for them
        assert caller.receive(None) == ["step", "snippets/a.pycon:2", 5.0]
        assert caller.receive(None) == ["step", "snippets/a.pycon:3", 5.0]
        assert not caller.has_message()


def many_steps_then_spin(*, report: Callable[[str, float], None], **_: object) -> None:
    for line in range(1, 2001):  # faster than the caller looks: it sees the last at once
        report(f"snippets/many.pycon:{line} (used by docs/many.md:3)", 10)
    spin_reported(30, 0.3, report=report)


def test_a_step_after_thousands_of_quick_ones_is_the_one_named() -> None:
    with pytest.raises(fork_server.StepTimedOut, match=r"after 0\.3 s of CPU") as raised:
        fork_server.shared().call(many_steps_then_spin)
    assert raised.value.where == "snippets/spin.pycon:2 (used by docs/spin.md:3)"


def malformed_step(*, report: Callable[[str, float], None], **_: object) -> None:
    report("snippets/bad.pycon:1 (used by docs/bad.md:3)", 10)
    report("snippets/bad.pycon:2 (used by docs/bad.md:3)", "soon")  # type: ignore[arg-type]
    time.sleep(30)


def forged_step(*, report: Callable[[str, float], None], **_: object) -> None:
    report("snippets/bad.pycon:1 (used by docs/bad.md:3)", 10)
    json.dumps = lambda *args, **kwargs: "not JSON"  # what a hostile snippet can do
    report("snippets/bad.pycon:2 (used by docs/bad.md:3)", 10)
    time.sleep(30)


@pytest.mark.parametrize("work", [malformed_step, forged_step])
def test_a_malformed_step_fails_the_page_at_the_step_before_it(work: Callable[..., None]) -> None:
    # Both steps arrive at one look: the good one is taken before the bad one fails the page.
    with pytest.raises(fork_server.ProtocolError, match="sent a malformed message") as raised:
        fork_server.shared().call(work)
    assert raised.value.where == "snippets/bad.pycon:1 (used by docs/bad.md:3)"


def test_steps_are_taken_whole_as_they_arrive_without_waiting() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        caller = fork_server._Channel(ours, child=False)
        assert list(caller.take_arrived()) == []  # nothing yet: it returns, it does not wait
        fork_server._Channel(theirs, child=True).send(["step", "snippets/a.pycon:1", 5.0])
        half = b'["step", "snippets/a.pycon:2", 5.0]'
        theirs.sendall(fork_server._HEADER.pack(len(half)) + half[:10])
        time.sleep(0.05)  # both have arrived
        assert list(caller.take_arrived()) == [["step", "snippets/a.pycon:1", 5.0]]
        theirs.sendall(half[10:])
        time.sleep(0.05)
        assert list(caller.take_arrived()) == [["step", "snippets/a.pycon:2", 5.0]]


def test_a_step_too_large_to_wait_for_is_refused_at_once() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(fork_server._HEADER.pack(fork_server.MAX_MESSAGE + 1) + b"[")
        time.sleep(0.05)
        with pytest.raises(ValueError, match="at most"):
            list(fork_server._Channel(ours, child=False).take_arrived())


def test_a_child_reads_no_further_than_its_message() -> None:
    """A branch reads its preload, then file descriptors arrive on the same socket: a read
    past the message would take the bytes they come with, and drop the descriptors."""
    ours, theirs = socket.socketpair()
    spare_read, spare_write = os.pipe()
    with ours, theirs:
        fork_server._Channel(ours, child=False).send("the preload")
        socket.send_fds(ours, [b"c"], [spare_read])
        os.close(spare_read)
        assert fork_server._Channel(theirs, child=True).receive(None) == "the preload"
        theirs.settimeout(5)  # a read past the message leaves nothing to wait for
        message, fds, _, _ = socket.recv_fds(theirs, 1, 1)
        assert message == b"c" and len(fds) == 1
        os.write(spare_write, b"x")
        assert os.read(fds[0], 1) == b"x"  # the very pipe sent
        os.close(fds[0])
    os.close(spare_write)
