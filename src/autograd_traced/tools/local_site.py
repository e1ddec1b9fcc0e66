"""What the tests, the benchmark and the preview share to work on the site: copy its sources,
the strict build command, serve a built copy on 127.0.0.1, and the Chromium that loads it
offline.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

HOST = "127.0.0.1"
PORT = 8000  # where `nox -s serve` and `nox -s preview` serve the site
# `mkdocs serve` as `nox -s serve` runs it: with --dirty, a rebuild writes only the pages whose
# inputs changed (build.incremental). noxfile.py imports this module: standard library only.
SERVE_ARGS = ("serve", "--dirty")

# What a copy of the site needs to build and test its snippets; site/, .git, .nox stay behind.
SITE_SOURCES = ("mkdocs.yml", "conftest.py", "pyproject.toml", "docs", "snippets")

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


def url_path(page: str) -> str:
    """A page's URL under the site, from its path under docs/: "a/b.md" -> "a/b/",
    "index.md" -> "" (MkDocs' directory URLs)."""
    parts = page.removesuffix(".md").split("/")
    if parts[-1] in ("index", "README"):
        parts.pop()
    return "".join(f"{part}/" for part in parts)


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


class _StaticHostHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a built site as a static host (GitHub Pages) does: under the path prefix of its
    address, text gzipped for a browser that accepts it, with the site's 404.html (status
    404) for any path it does not have, and no folder listings."""

    prefix = "/"

    def send_head(self) -> BinaryIO | None:
        if not (urlsplit(self.path).path + "/").startswith(self.prefix):
            self.send_error(HTTPStatus.NOT_FOUND)
            return None
        if (file := self._compressible_file()) is None:
            return super().send_head()  # a directory without its "/" is redirected to it
        body = _gzipped(file, file.stat().st_mtime_ns)
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", self.guess_type(str(file)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)

    def _compressible_file(self) -> Path | None:
        """The text file this GET asks for, when the browser accepts gzip; else None."""
        if "gzip" not in self.headers.get("Accept-Encoding", ""):
            return None
        file = Path(self.translate_path(self.path))
        if file.is_dir():
            if not urlsplit(self.path).path.endswith("/"):
                return None
            file = file / "index.html"
        if not file.is_file() or not self.guess_type(str(file)).startswith(_COMPRESSED_TYPES):
            return None
        return file

    def translate_path(self, path: str) -> str:
        inside = urlsplit(path).path.removeprefix(self.prefix.rstrip("/"))
        return super().translate_path(inside or "/")

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND)  # a static host lists no folder

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != HTTPStatus.NOT_FOUND or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(code, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


# What GitHub Pages compresses: text, scripts, style sheets, JSON, SVG and XML.
_COMPRESSED_TYPES = (
    "text/",
    "application/javascript",
    "application/json",
    "application/xml",
    "image/svg+xml",
)


@functools.lru_cache(maxsize=256)
def _gzipped(file: Path, mtime_ns: int) -> bytes:
    return gzip.compress(file.read_bytes(), mtime=0)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        # A browser that leaves a page while it loads closes the connection: not the site's fault.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def serving(directory: Path, prefix: str = "/", port: int = 0) -> Iterator[str]:
    """Serve `directory` at `prefix` on `port` (0: a free one) of 127.0.0.1, as a static host
    would (`_StaticHostHandler`); yields the base URL."""
    handler_class = type("Handler", (_StaticHostHandler,), {"prefix": prefix})
    handler = functools.partial(handler_class, directory=str(directory))
    server = _Server((HOST, port), handler)
    # Polled for shutdown every 50 ms rather than 0.5 s: stopping costs a test no wait.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_port}{prefix}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
