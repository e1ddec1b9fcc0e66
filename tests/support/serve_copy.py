"""`mkdocs serve` on a copy of the site whose snippet is broken, for tests/site/test_serve.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from autograd_traced.tools.local_site import HOST, SERVE_ARGS
from tests.support.build import copy_site_sources

BROKEN_SNIPPET = "snippets/computing_gradients/phase2_backward.pycon"
RIGHT, WRONG = "b.grad = -0.0817", "b.grad = -0.0818"


@dataclass
class ServeCopy:
    root: Path
    url: str  # known once serving: under site_url's path, as published
    process: subprocess.Popen[bytes]
    log_file: Path

    @classmethod
    def start(cls, workdir: Path) -> ServeCopy:
        root = copy_site_sources(workdir / "repo")
        snippet = root / BROKEN_SNIPPET
        snippet.write_text(snippet.read_text().replace(RIGHT, WRONG))
        with socket.socket() as probe:  # a free port, for the moment
            probe.bind((HOST, 0))
            port = probe.getsockname()[1]
        log_file = workdir / "serve.log"
        with log_file.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "mkdocs", *SERVE_ARGS, "--dev-addr", f"{HOST}:{port}"],
                cwd=root,
                env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return cls(root, "", process, log_file)

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")

    def wait_for(self, text: str, *, after: int = 0, timeout: float = 120) -> int:
        """Wait until the log shows `text` past offset `after`; the offset just past it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.log().find(text, after)
            if found >= 0:
                return found + len(text)
            if self.process.poll() is not None:
                raise AssertionError(f"mkdocs serve exited:\n{self.log()}")
            time.sleep(0.1)
        raise AssertionError(f"no {text!r} within {timeout} s:\n{self.log()}")

    def wait_until_serving(self) -> int:
        end = self.wait_for("Serving on ")
        self.url = self.log()[end:].split()[0]
        return end

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return response.read().decode()

    def fix(self) -> None:
        snippet = self.root / BROKEN_SNIPPET
        snippet.write_text(snippet.read_text().replace(WRONG, RIGHT))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
