"""Material's search, as a reader types in it: "leaf" finds both articles, previews show no TeX."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import Recorder
from tests.support.paths import LEAF_DEFINITIONS

pytestmark = pytest.mark.browser


def _search(rec: Recorder, site_url: str, query: str) -> None:
    rec.page.goto(site_url, wait_until="networkidle")
    rec.page.keyboard.press("/")  # Material's search shortcut
    search = rec.page.locator("input.md-search__input")
    expect(search).to_be_focused()
    search.press_sequentially(query)  # Material searches on keyup, not on fill()
    expect(rec.page.locator(".md-search-result__item").first).to_be_visible()


def test_leaf_finds_the_definition_in_both_articles(site_url: str, recorder: Recorder) -> None:
    _search(recorder, site_url, "leaf")
    # Every result, those folded under "N more on this page" included; without ?h=leaf.
    links = recorder.page.locator(".md-search-result__item a.md-search-result__link")
    hrefs = [
        re.sub(r"\?h=[^#]*", "", href.removeprefix(site_url))
        for href in links.evaluate_all("links => links.map(link => link.href)")
    ]
    missing = [location for location in LEAF_DEFINITIONS if location not in hrefs]
    assert not missing, f'"leaf" shows no result for {missing}; it shows {hrefs}'
    pages = {location.split("/")[0] for location in LEAF_DEFINITIONS}
    visible = {
        href.split("/")[0]
        for href, link in zip(hrefs, links.all(), strict=True)
        if link.is_visible()
    }
    assert pages <= visible, f"articles without a visible result: {sorted(pages - visible)}"
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_previews_show_math_as_text(site_url: str, recorder: Recorder) -> None:
    _search(recorder, site_url, "afresh")  # a section that writes the gradient as a fraction
    previews = recorder.page.locator(".md-search-result").inner_text()
    assert "∂L/∂b" in previews, previews
    assert "\\frac" not in previews and "\\(" not in previews, previews
