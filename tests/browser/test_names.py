"""Things are called the same everywhere a reader meets them: each article's title in the
navigation, its heading, the window's title and the home page's link; a player's buttons as
the prose names them.
"""

from __future__ import annotations

import re

import pytest

from tests.support.browser import Recorder
from tests.support.paths import PAGE_URLS, slug

pytestmark = pytest.mark.browser

ARTICLE_URLS = [path for path in PAGE_URLS if path]
SITE_NAME = "Autograd, Traced"


def _text(value: str | None) -> str:
    return re.sub(r"\s+", " ", (value or "").replace("¶", "")).strip()


NAMES_JS = """
(selector) => Object.fromEntries([...document.querySelectorAll(selector)].map(
  (link) => [new URL(link.href).pathname, link.textContent.replace(/\\s+/g, ' ').trim()]))
"""


def test_each_article_has_one_title(site_url: str, recorder: Recorder) -> None:
    page = recorder.page
    page.goto(site_url, wait_until="networkidle")
    navigation = page.evaluate(NAMES_JS, ".md-nav--primary a.md-nav__link")
    home_page = page.evaluate(NAMES_JS, "article li > strong > a")
    problems = []
    for path in ARTICLE_URLS:
        page.goto(site_url + path, wait_until="networkidle")
        heading = _text(page.locator("article h1").text_content())
        where = "/" + path
        names = {
            "window title": page.title().removesuffix(f" - {SITE_NAME}"),
            "navigation": navigation.get(where, "(none)"),
            "home page link": home_page.get(where, "(none)"),
        }
        problems += [
            f"{where}: {place} {name!r}, heading {heading!r}"
            for place, name in names.items()
            if name != heading
        ]
    assert not problems, "\n".join(problems)


# A control named in bold in the prose, as a reader would look for it on the page.
BUTTON_WORDS = re.compile(r"\b(First|Previous|Next|Last)\b")


@pytest.mark.parametrize("page_path", ARTICLE_URLS, ids=slug)
def test_the_prose_names_the_buttons_as_they_read(
    page_path: str, site_url: str, recorder: Recorder
) -> None:
    page = recorder.page
    page.goto(site_url + page_path, wait_until="networkidle")
    labels = set(page.locator(".ag-tracer__button").all_inner_texts())
    named = [
        _text(text)
        for text in page.locator("article :is(p, li) strong").all_text_contents()
        if BUTTON_WORDS.match(_text(text))
    ]
    wrong = [name for name in named if name not in labels]
    assert not wrong, f"the prose names {wrong}; the buttons read {sorted(labels)}"
