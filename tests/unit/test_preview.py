"""The preview serves a built site as GitHub Pages does: under its path, with its 404 page."""

import gzip
import http.client
import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from autograd_traced.tools.local_site import serving
from autograd_traced.tools.preview import preview_address

NOT_FOUND = "<title>404 - Not found</title>"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A small built site, served under /autograd-traced/."""
    site = tmp_path_factory.mktemp("site")
    (site / "index.html").write_text("home")
    (site / "404.html").write_text(NOT_FOUND)
    (site / "page").mkdir()
    (site / "page" / "index.html").write_text("a page")
    (site / "assets").mkdir()
    (site / "assets" / "style.css").write_text("body {}")
    (site / "assets" / "image.png").write_bytes(b"\x89PNG")
    with serving(site, "/autograd-traced/") as url:
        yield url


def get(url: str, path: str) -> tuple[int, str, str]:
    """Status, Location header and body of GET `path` on the server of `url`, unfollowed."""
    connection = http.client.HTTPConnection(urlsplit(url).netloc, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Location", ""), response.read().decode()
    finally:
        connection.close()


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/autograd-traced/", (200, "", "home")),
        ("/autograd-traced/page/", (200, "", "a page")),
        ("/autograd-traced/assets/style.css", (200, "", "body {}")),
        ("/autograd-traced", (301, "/autograd-traced/", "")),
        ("/autograd-traced/page", (301, "/autograd-traced/page/", "")),
        ("/autograd-traced/missing/", (404, "", NOT_FOUND)),
        ("/autograd-traced/assets/", (404, "", NOT_FOUND)),  # no folder listing
        ("/", (404, "", NOT_FOUND)),  # outside the site's path
        ("/page/", (404, "", NOT_FOUND)),
        ("/autograd-traced-other/", (404, "", NOT_FOUND)),
    ],
)
def test_served_under_the_published_path(
    url: str, path: str, expected: tuple[int, str, str]
) -> None:
    assert urlsplit(url).path == "/autograd-traced/"
    assert get(url, path) == expected


@pytest.mark.parametrize(
    ("path", "expected", "compressed"),
    [
        ("/autograd-traced/", "home", True),  # a folder's index.html
        ("/autograd-traced/page/", "a page", True),
        ("/autograd-traced/assets/style.css", "body {}", True),
        ("/autograd-traced/assets/image.png", "\x89PNG", False),  # already compressed
    ],
)
def test_text_is_gzipped_for_a_browser_that_accepts_it(
    url: str, path: str, expected: str, compressed: bool
) -> None:
    """As GitHub Pages serves it: page weight is what a reader downloads."""
    connection = http.client.HTTPConnection(urlsplit(url).netloc, timeout=5)
    try:
        connection.request("GET", path, headers={"Accept-Encoding": "gzip, deflate"})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    assert response.status == 200
    assert (response.getheader("Content-Encoding") == "gzip") is compressed
    assert int(response.getheader("Content-Length", "-1")) == len(body)
    assert (gzip.decompress(body) if compressed else body).decode("latin-1") == expected
    if compressed:
        assert get(url, path)[2] == expected  # asked without gzip: as it is on disk


def test_without_a_404_page_the_plain_error_is_sent(tmp_path: Path) -> None:
    with serving(tmp_path) as url:
        status, _, body = get(url, "/missing")
    assert status == 404
    assert "File not found" in body


def test_preview_address_keeps_the_published_path() -> None:
    published = "https://autograd-traced.github.io/autograd-traced/"
    assert preview_address(published, 8000) == "http://127.0.0.1:8000/autograd-traced/"
    assert preview_address("https://example.org", 9000) == "http://127.0.0.1:9000/"


def test_a_browser_that_hangs_up_mid_page_is_no_error(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A reader leaving a page while it loads resets the connection: the server says nothing
    (it printed a traceback into the test log) and goes on serving."""
    (tmp_path / "big.bin").write_bytes(bytes(16 << 20))
    with serving(tmp_path) as url:
        for _ in range(3):
            address = urlsplit(url)
            hang_up = socket.create_connection((address.hostname, address.port), timeout=5)
            hang_up.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            hang_up.recv(1)  # the response has begun
            hang_up.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            hang_up.close()  # a reset, with most of the file unsent
        time.sleep(0.5)
        assert get(url, "/missing")[0] == 404
    assert "Exception occurred" not in capfd.readouterr().err
