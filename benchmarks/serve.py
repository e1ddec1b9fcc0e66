"""`mkdocs serve` on two sites at once, the real one and the N-page copy: save a snippet that one
page uses, time until the log says "Reloading browsers", alternately on each site, and follow
the memory of the large site's serve process tree (children included) across its rebuilds.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from autograd_traced.tools.local_site import HOST, SERVE_ARGS
from benchmarks.harness import PYTHON, BenchError, Samples, base_env, log
from benchmarks.memory import TreeMemory, tree_memory
from benchmarks.scaled_site import ScaledSite, edit_snippet

LINE_TIMEOUT = 300.0  # seconds to wait for a serve log line (a first build of 41 pages is slow)
POLLING_INTERVAL = 0.5  # mkdocs serve polls the watched files twice a second
SETTLE = 1.0  # seconds between a reload and the next edit


@dataclass
class ServeLog:
    """The lines a running `mkdocs serve` printed, each stamped with perf_counter on arrival."""

    lines: queue.Queue[tuple[float, str]] = field(default_factory=queue.Queue)
    history: list[str] = field(default_factory=list)

    def pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put((time.perf_counter(), line.rstrip()))

    def wait_for(self, needle: str) -> float:
        """When the first line from now on containing `needle` arrived."""
        deadline = time.monotonic() + LINE_TIMEOUT
        while (left := deadline - time.monotonic()) > 0:
            try:
                stamp, line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.history.append(line)
            if "ERROR" in line or "Aborted with" in line:
                raise BenchError(f"mkdocs serve failed: {line}\n" + "\n".join(self.history[-30:]))
            if needle in line:
                return stamp
        raise BenchError(f"no {needle!r} from mkdocs serve:\n" + "\n".join(self.history[-30:]))


@dataclass
class Served:
    site: ScaledSite
    process: subprocess.Popen[str]
    log: ServeLog
    original: str  # the edited snippet as it was

    def reload_after_edit(self, round_: int) -> float:
        """Seconds from saving the snippet to "Reloading browsers"."""
        start = time.perf_counter()
        edit_snippet(self.site.edited_snippet, self.original, round_)
        # Not "Documentation built in": mkdocs drops a log line that repeats an earlier one
        # word for word, so equal durations would go unlogged.
        return self.log.wait_for("Reloading browsers") - start

    def memory(self) -> TreeMemory:
        return tree_memory(self.process.pid)


@contextlib.contextmanager
def mkdocs_serve(site: ScaledSite) -> Iterator[Served]:
    """Run `mkdocs serve` on the site until it serves; always stop it afterwards."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [PYTHON, "-m", "mkdocs", *SERVE_ARGS, "--dev-addr", f"{HOST}:{port}"],
        cwd=site.root,
        env=base_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, so we stop exactly it and its children
    )
    serve_log = ServeLog()
    threading.Thread(target=serve_log.pump, args=(process.stdout,), daemon=True).start()
    try:
        serve_log.wait_for("Serving on")
        with urllib.request.urlopen(f"http://{HOST}:{port}/", timeout=60) as response:
            response.read()
        yield Served(site, process, serve_log, site.edited_snippet.read_text(encoding="utf-8"))
    finally:
        stop_process_group(process)


def stop_process_group(process: subprocess.Popen[str]) -> None:
    """SIGINT (mkdocs shuts down and removes its temp site), then SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def measure_serve(
    site: ScaledSite, scaled: ScaledSite, rounds: int
) -> tuple[Samples, list[TreeMemory]]:
    """`rounds` snippet edits on each site, alternately; the memory of the scaled site's serve
    tree before the first edit and after every rebuild."""
    samples: Samples = {"serve_reload_site": [], "serve_reload_scaled": []}
    with mkdocs_serve(site) as served_site, mkdocs_serve(scaled) as served_scaled:
        memory = [served_scaled.memory()]
        for i in range(rounds):
            for name, served in zip(samples, (served_site, served_scaled), strict=True):
                # Edit at a phase of the watcher's polling period spread evenly over the
                # rounds: the detection delay is sampled fairly, not always ~0 or ~max.
                time.sleep(SETTLE + POLLING_INTERVAL * i / rounds)
                samples[name].append(served.reload_after_edit(i))
                log(f"  {name} #{i + 1}: {samples[name][-1]:.2f} s")
            time.sleep(SETTLE)
            memory.append(served_scaled.memory())
            log(f"  scaled serve's memory: {memory[-1].pss_bytes / 2**20:.0f} MiB PSS")
    return samples, memory
