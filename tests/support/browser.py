"""What the browser tests share: how a reader sees the site, and a page that records what it did."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import ConsoleMessage, Page, Request

from autograd_traced.tools.local_site import HOST


def is_local(url: str) -> bool:
    """True for requests served by the test server, and for data: and blob: URLs."""
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob") or parts.hostname == HOST


@dataclass(frozen=True)
class View:
    """How a reader sees the site: window width in CSS px and the system's colour scheme."""

    width: int
    scheme: str  # "light" or "dark": Material follows it with its default or slate palette

    def __str__(self) -> str:
        return f"{self.width}-{self.scheme}"

    @property
    def palette(self) -> str:
        """The `data-md-color-scheme` Material sets for this colour scheme."""
        return {"light": "default", "dark": "slate"}[self.scheme]


def axe_audit(page: Page, context: str | None = None) -> dict[str, Any]:
    """axe-core's results for the page (or the part `context` selects), every block drawn.

    Blocks out of sight are not drawn until they come near (`content-visibility: auto`,
    docs/stylesheets), and Chromium keeps their styles as they were when they left: axe-core
    read a code block there in the light palette's colours under the dark palette
    (dequelabs/axe-core#2768). A reader only ever sees a block drawn, so it is audited drawn,
    from the next frame on (when Chromium draws what is no longer skipped).
    """
    page.add_style_tag(content="* { content-visibility: visible !important; }")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return _axe().run(page, context=context).response


@functools.cache
def _axe() -> Axe:
    return Axe()  # axe-core, from the package: its script read once


def swap_in(page: Page, navigate: Callable[[], None]) -> None:
    """Navigate by instant navigation and return once the new content is in.

    Material changes the URL first and swaps the page's content in a few hundred ms later, so
    a locator that also matches the old page (the home page has console blocks too) can act on
    content about to be replaced. The old content is marked, and its replacement awaited.
    """
    page.evaluate("document.querySelector('article').dataset.swapOut = 'yes'")
    navigate()
    page.wait_for_function(
        "() => { const a = document.querySelector('article'); return a && !a.dataset.swapOut }"
    )


DESKTOP_LIGHT = View(1280, "light")
PHONE_WIDTH = 390
# Every page is read in each of these (tests/browser/test_reading.py).
VIEWS = [DESKTOP_LIGHT, View(1280, "dark"), View(PHONE_WIDTH, "light"), View(PHONE_WIDTH, "dark")]


@dataclass
class Recorder:
    """A page plus everything it did since it was opened."""

    page: Page
    view: View = DESKTOP_LIGHT
    requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    error_responses: list[str] = field(default_factory=list)

    def off_origin_requests(self) -> list[str]:
        """Every requested URL whose host is not the local test server."""
        return [url for url in self.requests if not is_local(url)]

    def problems(self) -> list[str]:
        """One line per problem: off-origin requests, console errors, exceptions, failures."""
        groups = {
            "off-origin request": self.off_origin_requests(),
            "console error": self.console_errors,
            "uncaught exception": self.page_errors,
            "failed request": self.failed_requests,
            "HTTP error": self.error_responses,
        }
        return [f"{kind}: {item}" for kind, items in groups.items() for item in items]

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            where = message.location
            self.console_errors.append(
                f"{message.text} ({where.get('url')}:{where.get('lineNumber')})"
            )

    def _failed(self, request: Request) -> None:
        self.failed_requests.append(f"{request.url} ({request.failure})")
