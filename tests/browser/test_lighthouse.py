"""Lighthouse, as a phone, finds nothing to fix in accessibility, best practices and SEO.

Its performance score depends on how busy the machine is (Lighthouse slows the CPU it finds by
a factor of four), so no test asserts it: `python -m benchmarks --only lighthouse` measures it
against its target. The site is served as `nox -s preview` serves it: text gzipped, as GitHub
Pages sends it.
"""

from __future__ import annotations

import os

import pytest

from autograd_traced.tools import lighthouse
from tests.support.paths import PAGE_URLS, slug

pytestmark = pytest.mark.browser

ASSERTED = ("accessibility", "best-practices", "seo")


@pytest.fixture(scope="module")
def installed() -> None:
    if lighthouse.command() is None:
        message = "lighthouse not found: `nox -s browser` installs it (LIGHTHOUSE)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)


@pytest.mark.parametrize("page_path", PAGE_URLS, ids=slug)
def test_lighthouse_finds_nothing_to_fix(installed: None, site_url: str, page_path: str) -> None:
    report = lighthouse.audit(site_url + page_path)
    print(f"{slug(page_path)}: {report.scores}")  # performance, for the record (-s shows it)
    failed = {name: report.failed[name] for name in ASSERTED if report.scores[name] < 100}
    assert not failed, f"{slug(page_path)}: {report.scores}: {failed}"
