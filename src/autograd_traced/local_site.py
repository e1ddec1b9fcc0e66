"""What the tests and the benchmark share to work on the site: copy its sources, the strict
build command, serve a built copy on 127.0.0.1, and the Chromium that loads it offline.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOST = "127.0.0.1"

# What a copy of the site needs to build and test its snippets; site/, .git, .nox stay behind.
SITE_SOURCES = ("mkdocs.yml", "conftest.py", "pyproject.toml", "docs", "snippets", "hooks")

# Debian's Chromium, never a Playwright download; CHROMIUM points elsewhere.
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags, Chromium tries Google's hosts at every start.
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def copy_site_sources(root: Path, destination: Path) -> Path:
    destination.mkdir(parents=True)
    for name in SITE_SOURCES:
        source = root / name
        if source.is_dir():
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(source, destination / name, ignore=ignore)
        else:
            shutil.copy2(source, destination / name)
    return destination


def strict_build_command(site_dir: Path) -> list[str]:
    """`mkdocs build --strict` into `site_dir`, with this Python; run it from the site's root."""
    return build_command(site_dir, "--strict")


def build_command(site_dir: Path, *flags: str) -> list[str]:
    """`mkdocs build FLAGS` into `site_dir`, with this Python; run it from the site's root."""
    return [sys.executable, "-m", "mkdocs", "build", *flags, "--site-dir", str(site_dir)]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving(directory: Path) -> Iterator[str]:
    """Serve `directory` on a free port of 127.0.0.1; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer((HOST, 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
