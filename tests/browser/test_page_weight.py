"""Every page, loaded once with an empty cache, downloads less than 600 KB.

KB = 1000 bytes; the sum of every response body, uncompressed (the test server gzips text as
GitHub Pages does; the limit holds without it): HTML, CSS, JS, fonts, the search worker and
its index, the favicon, until network idle.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Response

from tests.support.browser import Recorder
from tests.support.paths import PAGE_URLS, slug

pytestmark = pytest.mark.browser

PAGE_BUDGET_BYTES = 600_000


def body_size(response: Response) -> int:
    try:
        return len(response.body())
    except PlaywrightError:  # redirects and aborted requests have no body
        return 0


@pytest.mark.parametrize("page_path", PAGE_URLS, ids=slug)
def test_page_weighs_under_budget(page_path: str, site_url: str, recorder: Recorder) -> None:
    responses: list[Response] = []
    recorder.page.context.on("response", lambda r: responses.append(r))  # workers too
    recorder.page.goto(site_url + page_path, wait_until="networkidle")
    sizes = sorted(
        ((body_size(r), r.url.removeprefix(site_url) or "(home)") for r in responses),
        reverse=True,
    )
    total = sum(size for size, _ in sizes)
    assert responses and not recorder.off_origin_requests()
    largest = "\n".join(f"{size / 1000:8.1f} KB  {url}" for size, url in sizes[:6])
    assert total < PAGE_BUDGET_BYTES, (
        f"/{page_path} downloads {total / 1000:.1f} KB, over {PAGE_BUDGET_BYTES / 1000:.0f} KB; "
        f"largest:\n{largest}"
    )
