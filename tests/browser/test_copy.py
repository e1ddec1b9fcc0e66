"""The copy button of a console block copies code that runs and prints what the page shows.

A reader copies every console block of a page, in order, and pastes each into the same plain
`python` console. Pages are reached by Material's instant navigation from the home page, as a
reader clicking through would, so the copy must work on a page swapped in without a reload.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import partial

import pytest
from playwright.sync_api import Route

from tests.support.browser import Recorder, swap_in
from tests.support.paths import PAGE_URLS, slug
from tests.support.transcripts import examples

pytestmark = pytest.mark.browser

CONSOLE_BLOCKS = "article div.highlight:has(> span.filename)"


def _serve_sitemap_for(site_url: str, route: Route) -> None:
    """Instant navigation only takes the sitemap's URLs, which name the configured site_url
    (port 8000); the test server's port differs, so its sitemap is rewritten to name it."""
    sitemap = route.fetch().text()
    home = re.search(r"<loc>(.*?)</loc>", sitemap)
    assert home, "sitemap.xml lists no page"
    route.fulfill(body=sitemap.replace(home.group(1), site_url), content_type="application/xml")


def _open_by_instant_navigation(rec: Recorder, site_url: str, path: str) -> None:
    rec.page.route("**/sitemap.xml", partial(_serve_sitemap_for, site_url))
    rec.page.goto(site_url, wait_until="networkidle")
    if not path:
        return
    rec.page.evaluate("window.notReloaded = true")
    link = rec.page.locator(f'article a[href$="/{path}"], article a[href="{path}"]').first
    swap_in(rec.page, link.click)
    assert rec.page.url == site_url + path
    assert rec.page.evaluate("window.notReloaded === true"), f"{path}: loaded without instant nav"


@pytest.mark.parametrize("page_path", PAGE_URLS, ids=slug)
def test_copied_console_blocks_run_in_python_and_print_the_page(
    page_path: str, site_url: str, recorder: Recorder
) -> None:
    page = recorder.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site_url[:-1])
    _open_by_instant_navigation(recorder, site_url, page_path)
    blocks = page.locator(CONSOLE_BLOCKS)
    assert blocks.count() > 0, f"{page_path}: no console block"
    # The lab's fixes sit in collapsed answers: a reader opens them before copying.
    page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true })")

    copied, shown = [], []
    for index in range(blocks.count()):
        block = blocks.nth(index)
        page.evaluate("navigator.clipboard.writeText('')")
        block.hover()  # Material shows the copy button on hover
        block.locator('button[data-md-type="copy"]').click()
        text = page.evaluate("navigator.clipboard.readText()")
        assert text, f"{page_path}: block {index} copied nothing"
        copied.append(text)
        shown += examples(block.locator("code").text_content() or "")

    for text in copied:
        compile(text, "copied.py", "exec")  # no prompt or output left: it is a Python file
    printed = [line for example in shown for line in example.printed]
    errors = [example.error for example in shown if example.error]

    # The reader pastes each block into `python` and presses Enter after it.
    console = subprocess.run(
        [sys.executable, "-i", "-q"],
        input="\n\n".join(copied) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert console.stdout.rstrip("\n").split("\n") == printed, console.stderr
    tracebacks = console.stderr.count("Traceback (most recent call last):")
    assert tracebacks == len(errors), f"{page_path}: unexpected errors\n{console.stderr}"
    for error in errors:
        assert f"\n{error}\n" in console.stderr, f"{page_path}: {error!r} not raised"
    assert not recorder.problems(), recorder.problems()
