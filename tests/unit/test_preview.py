"""The preview serves a built site as GitHub Pages does: under its path, with its 404 page."""

import http.client
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


def test_without_a_404_page_the_plain_error_is_sent(tmp_path: Path) -> None:
    with serving(tmp_path) as url:
        status, _, body = get(url, "/missing")
    assert status == 404
    assert "File not found" in body


def test_preview_address_keeps_the_published_path() -> None:
    published = "https://autograd-traced.github.io/autograd-traced/"
    assert preview_address(published, 8000) == "http://127.0.0.1:8000/autograd-traced/"
    assert preview_address("https://example.org", 9000) == "http://127.0.0.1:9000/"
