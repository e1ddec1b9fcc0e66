"""Material's search, as a reader types in it: "leaf" finds both articles, code names such as
`zero_grad` find the sections that teach them, previews are prose without TeX."""

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
    # Each key's search answers in turn: wait for the last, the same results 0.3 s apart.
    rec.page.wait_for_function(SETTLED_JS, polling=300)


SETTLED_JS = """
() => {
  const shown = [...document.querySelectorAll('.md-search-result__item a')].map(a => a.href);
  const settled = shown.length > 0 && window.agLastResults === shown.join(' ');
  window.agLastResults = shown.join(' ');
  return settled;
}
"""


def _found(rec: Recorder, site_url: str) -> list[str]:
    """Every result, those folded under "N more on this page" included; without ?h=..."""
    links = rec.page.locator(".md-search-result__item a.md-search-result__link")
    return [
        re.sub(r"\?h=[^#]*", "", href.removeprefix(site_url))
        for href in links.evaluate_all("links => links.map(link => link.href)")
    ]


def test_leaf_finds_the_definition_in_both_articles(site_url: str, recorder: Recorder) -> None:
    _search(recorder, site_url, "leaf")
    hrefs = _found(recorder, site_url)
    missing = [location for location in LEAF_DEFINITIONS if location not in hrefs]
    assert not missing, f'"leaf" shows no result for {missing}; it shows {hrefs}'
    pages = {location.split("/")[0] for location in LEAF_DEFINITIONS}
    shown = recorder.page.locator(".md-search-result__item a.md-search-result__link").evaluate_all(
        "links => links.map(link => link.getClientRects().length > 0)"
    )
    visible = {href.split("/")[0] for href, seen in zip(hrefs, shown, strict=True) if seen}
    assert pages <= visible, f"articles without a visible result: {sorted(pages - visible)}"
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_previews_show_math_as_text(site_url: str, recorder: Recorder) -> None:
    _search(recorder, site_url, "afresh")  # a section that writes the gradient as a fraction
    previews = recorder.page.locator(".md-search-result").inner_text()
    assert "∂L/∂b" in previews, previews
    assert "\\frac" not in previews and "\\(" not in previews, previews


# Code names, written in the prose as `.detach()`, `requires_grad=True`, `optimizer.zero_grad()`,
# and the sections that teach each one (the lab's answers are left out of the index on purpose).
CODE_NAMES = {
    "detach": ["pitfalls/#where-requires_grad-gets-lost"],
    "zero_grad": ["pitfalls/#gradients-accumulate", "computing-gradients/#grad-versus-backward"],
    "retain_graph": [
        "computation-graphs/#why-this-script-needs-the-graph-twice",
        "computation-graphs/#without-retain_graph-a-second-request",
    ],
    "requires_grad": [
        "computing-gradients/#requires_grad-decides-what-you-can-read-back",
        "pitfalls/#where-requires_grad-gets-lost",
    ],
    "backward": [
        "computing-gradients/#phase-2-backward-then-read-grad",
        "computing-gradients/#grad-versus-backward",
        "pitfalls/#which-leaves-backward-fills",
    ],
    "AccumulateGrad": [
        "computation-graphs/#the-graph-pytorch-recorded",
        "computing-gradients/#links-of-a-chain",
    ],
}
# What a player's steps would put into a preview: "Line 1 of 5. Changed: z.", a snippet path.
NOT_PROSE = re.compile(r"Line \d+ of \d+|\.pycon\b|Changed: ")


@pytest.mark.parametrize("name", CODE_NAMES)
def test_code_names_find_the_sections_that_teach_them(
    site_url: str, recorder: Recorder, name: str
) -> None:
    _search(recorder, site_url, name)
    found = _found(recorder, site_url)
    missing = [section for section in CODE_NAMES[name] if section not in found]
    assert not missing, f"{name!r} does not find {missing}; it finds {found}"
    previews = recorder.page.locator(".md-search-result__article").all_text_contents()
    not_prose = [text for text in previews if NOT_PROSE.search(text)]
    assert not not_prose, f"{name!r}: previews that are not prose: {not_prose}"
