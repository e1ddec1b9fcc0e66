"""Fixtures for the browser tests: build the site once, serve it, drive headless Chromium.

Every test gets a fresh context and page wrapped in a ``Recorder`` that logs requests, console
errors, uncaught exceptions, failed requests and HTTP errors. Requests that leave 127.0.0.1 are
recorded and then aborted, so the pages are tested as a reader without internet would see them.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Playwright, sync_playwright

from autograd_traced.tools.local_site import CHROMIUM, CHROMIUM_ARGS, serving
from tests.support.browser import DESKTOP_LIGHT, Recorder, View, is_local
from tests.support.build import build
from tests.support.paths import ROOT

SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Iterator[pytest.TestReport]:
    """Keep each phase's report on the item, so fixtures can see whether the test failed."""
    report = yield
    item.stash.setdefault(REPORTS, {})[report.when] = report
    return report


@pytest.fixture(scope="session")
def served_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """The site, built once per session with `mkdocs build --strict` for the address it is
    served at (a free port of 127.0.0.1), so that instant navigation works there."""
    out = tmp_path_factory.mktemp("site")
    with serving(out) as url:  # the port first: the build needs the address
        result = build(ROOT, out, site_url=url)
        if not result.ok:
            pytest.fail(f"mkdocs build --strict failed:\n{result.log}", pytrace=False)
        yield out, url


@pytest.fixture(scope="session")
def built_site(served_site: tuple[Path, str]) -> Path:
    return served_site[0]


@pytest.fixture(scope="session")
def site_url(served_site: tuple[Path, str]) -> str:
    """Base URL of the built site, served over HTTP."""
    return served_site[1]


@pytest.fixture
def serve() -> Iterator[Callable[[Path], str]]:
    """Serve another directory for the rest of one test; returns its base URL."""
    with ExitStack() as stack:
        yield lambda directory: stack.enter_context(serving(directory))


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    """One headless Chromium for the session: Debian's, never a Playwright download."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: `apt-get install chromium` "
            "(or point the CHROMIUM environment variable at a Chromium binary)",
            pytrace=False,
        )
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_ARGS)
    )
    yield browser
    browser.close()


def _screenshot_name(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "page_path" in callspec.params:
        return re.sub(r"[^\w.-]+", "-", callspec.id)  # the page slug, and the view if any
    return re.sub(r"[^\w.-]+", "-", item.name)


@pytest.fixture
def recorder(browser: Browser, request: pytest.FixtureRequest) -> Iterator[Recorder]:
    """A fresh context and page, recording what the page does: 1280 px wide and light, or the
    `View` given by indirect parametrization (`@pytest.mark.parametrize("recorder", VIEWS,
    indirect=True)`).

    Saves a full-page screenshot to test-artifacts/screenshots/ when the test fails, or
    always with SAVE_SCREENSHOTS=1.
    """
    view: View = getattr(request, "param", DESKTOP_LIGHT)
    context = browser.new_context(
        viewport={"width": view.width, "height": 800}, color_scheme=view.scheme
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    rec = Recorder(page, view)
    # Context-level events also cover requests made by workers (the search worker); page
    # console events include console messages from workers.
    context.on("request", lambda r: rec.requests.append(r.url))
    context.on("requestfailed", rec._failed)
    context.on(
        "response",
        lambda r: r.status >= 400 and rec.error_responses.append(f"{r.status} {r.url}"),
    )
    page.on("console", rec._console)
    page.on("pageerror", lambda error: rec.page_errors.append(str(error)))
    context.route(lambda url: not is_local(url), lambda route: route.abort())
    yield rec

    reports = request.node.stash.get(REPORTS, {})
    failed = any(report.failed for report in reports.values())
    if failed or os.environ.get("SAVE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{_screenshot_name(request.node)}.png"
        try:
            # From the top: sticky header and sidebars are drawn where the page was scrolled to.
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=path, full_page=True, timeout=15_000)
        except Exception as error:  # a screenshot must never hide the test's own result
            warnings.warn(f"could not save {path}: {error}", stacklevel=1)
    context.close()
