"""Open the built site in headless Chromium and check what a reader would get.

Run with `pytest tests/browser -m browser`. Fixtures are in conftest.py: the site is built once
with `mkdocs build --strict`, served on 127.0.0.1, and each test gets a fresh recorded page.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.support.browser import Recorder
from tests.support.paths import PAGE_URLS, slug

pytestmark = pytest.mark.browser

EXPECTED_PAGES = {
    "",
    "computation-graphs/",
    "computing-gradients/",
    "pitfalls/",
    "find-the-line/",
}
ARTICLE_PAGES = {"computation-graphs/", "computing-gradients/"}
MIN_DIAGRAMS_PER_ARTICLE = 2


def _built_pages(site: Path) -> set[str]:
    """Content pages of the built site: every *.html except 404.html and under assets/."""
    pages = set()
    for html in site.rglob("*.html"):
        relative = html.relative_to(site)
        if relative.parts[0] == "assets" or relative.name == "404.html":
            continue
        path = relative.as_posix()
        pages.add(path.removesuffix("index.html") if relative.name == "index.html" else path)
    return pages


def _sitemap_pages(site: Path) -> set[str]:
    namespace = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locations = ET.parse(site / "sitemap.xml").iterfind("sm:url/sm:loc", namespace)
    return {urlsplit(loc.text or "").path.lstrip("/") for loc in locations}


MATH_STATE_JS = r"""
() => {
  const unrendered = [...document.querySelectorAll('.arithmatex:not(:has(.katex))')]
    .map(element => element.textContent.trim().slice(0, 80));
  const raw = [];
  const root = document.querySelector('article') ?? document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.includes('\\frac') || element.closest('.katex-mathml, pre, code')) {
      continue;
    }
    if (element.checkVisibility({visibilityProperty: true, opacityProperty: true})) {
      raw.push(node.textContent.trim().slice(0, 80));
    }
  }
  return {unrendered, raw};
}
"""


def _math_problems(rec: Recorder) -> list[str]:
    """Every .arithmatex element rendered by KaTeX, and no visible raw \\frac left over."""
    with suppress(PlaywrightError):  # a timeout is reported below, with the unrendered source
        rec.page.wait_for_function(
            "() => !document.querySelector('.arithmatex:not(:has(.katex))')", timeout=5_000
        )
    state: dict[str, Any] = rec.page.evaluate(MATH_STATE_JS)
    problems = [f"math not rendered by KaTeX: {text!r}" for text in state["unrendered"]]
    problems += [f"raw \\frac visible: {text!r}" for text in state["raw"]]
    return problems


OPEN_ENCLOSING_DETAILS_JS = """
element => {
  for (let details = element.closest('details'); details;
       details = details.parentElement.closest('details')) {
    details.open = true;
  }
}
"""


def _diagram_problems(rec: Recorder, path: str) -> list[str]:
    """Each inline SVG diagram in the article has a non-zero size; articles have enough of them.

    A player shows one step's graph at a time: test_tracer.py checks those."""
    diagrams = rec.page.locator('article svg[role="img"]:not(.ag-tracer svg)')
    count = diagrams.count()
    problems = []
    if path in ARTICLE_PAGES and count < MIN_DIAGRAMS_PER_ARTICLE:
        problems.append(
            f"expected at least {MIN_DIAGRAMS_PER_ARTICLE} diagrams "
            f'(article svg[role="img"]), found {count}'
        )
    for index in range(count):
        diagram = diagrams.nth(index)
        label = diagram.get_attribute("aria-label") or f"#{index}"
        # A diagram in a collapsed admonition is measured as the reader sees it once opened.
        diagram.evaluate(OPEN_ENCLOSING_DETAILS_JS)
        with suppress(PlaywrightError):  # not visible: reported below
            diagram.scroll_into_view_if_needed(timeout=2_000)
        box = diagram.bounding_box()
        if not diagram.is_visible() or box is None or box["width"] <= 0 or box["height"] <= 0:
            problems.append(f"diagram {label[:80]!r} is not visible or has no size: {box}")
    return problems


def _code_texts(rec: Recorder) -> list[str]:
    """Text of every code block (executed pycon output is rendered as .highlight blocks)."""
    return rec.page.locator(".highlight pre, pre code").all_text_contents()


def test_every_built_page_is_tested(built_site: Path) -> None:
    built = _built_pages(built_site)
    assert built >= EXPECTED_PAGES, f"missing pages: {sorted(EXPECTED_PAGES - built)}"
    assert built == set(PAGE_URLS), f"built pages {sorted(built)} != tested pages {PAGE_URLS}"
    assert _sitemap_pages(built_site) == built


@pytest.mark.parametrize("page_path", PAGE_URLS, ids=slug)
def test_page(page_path: str, site_url: str, recorder: Recorder) -> None:
    """No off-origin requests, console errors or failed loads; math and diagrams render."""
    response = recorder.page.goto(site_url + page_path, wait_until="networkidle")
    assert response is not None and response.ok, f"{page_path}: {response and response.status}"

    problems = _math_problems(recorder) + _diagram_problems(recorder, page_path)
    problems += recorder.problems()  # last: includes anything the checks above triggered
    assert not problems, f"{len(problems)} problem(s) on /{page_path}:\n" + "\n".join(problems)


def test_computing_gradients_output_and_reveal(site_url: str, recorder: Recorder) -> None:
    page = recorder.page
    page.goto(site_url + "computing-gradients/", wait_until="networkidle")

    outputs = _code_texts(recorder)
    assert any("-0.0817" in text for text in outputs), "no executed output shows -0.0817"

    details = page.locator("details", has=page.locator("summary", has_text="Reveal the answer"))
    expect(details).to_have_count(1)
    summary = details.locator(":scope > summary")
    answer = details.locator(":scope > :not(summary)").first
    expect(details).not_to_have_attribute("open", re.compile(".*"))
    expect(answer).to_be_hidden()

    summary.click()
    expect(details).to_have_attribute("open", re.compile(".*"))
    expect(answer).to_be_visible()
    expect(answer).to_contain_text("None")


def test_lab_answers_open_to_a_checkpoint_and_the_fixed_program(
    site_url: str, recorder: Recorder
) -> None:
    page = recorder.page
    page.goto(site_url + "find-the-line/", wait_until="networkidle")
    answers = page.locator("details", has=page.locator("summary", has_text="the checkpoint"))
    assert answers.count() >= 6
    for index in range(answers.count()):
        expect(answers.nth(index)).not_to_have_attribute("open", re.compile(".*"))
    first = answers.first
    fixed = first.locator(".highlight pre").last  # the fixed program, after any diagnostic
    expect(fixed).to_be_hidden()
    first.locator(":scope > summary").click()
    expect(fixed).to_be_visible()
    expect(first).to_contain_text("Checkpoint 1")
    expect(fixed).to_contain_text("w1.grad = -0.0898")


def test_computation_graphs_shows_second_backward_error(site_url: str, recorder: Recorder) -> None:
    recorder.page.goto(site_url + "computation-graphs/", wait_until="networkidle")
    message = "RuntimeError: Trying to backward through the graph a second time"
    assert any(message in text for text in _code_texts(recorder)), (
        f"no executed output contains {message!r}"
    )


def test_search_finds_retain_graph(site_url: str, recorder: Recorder) -> None:
    page = recorder.page
    page.goto(site_url, wait_until="networkidle")
    page.keyboard.press("/")  # Material's search shortcut
    search = page.locator("input.md-search__input")
    expect(search).to_be_focused()
    search.press_sequentially("retain_graph")  # Material searches on keyup, not on fill()
    results = page.locator(".md-search-result__item")
    expect(results.first).to_be_visible()
    assert results.count() >= 1

    # The search worker and its index were fetched from the local server, nothing else.
    assert any(re.search(r"/assets/javascripts/workers/search\.", url) for url in recorder.requests)
    assert any(url.endswith("/search/search_index.json") for url in recorder.requests)
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_off_origin_request_is_detected(
    built_site: Path, serve: Callable[[Path], str], recorder: Recorder, tmp_path: Path
) -> None:
    """Negative proof: a CDN script injected into one page is reported by the same check."""
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    page_file = site / "computation-graphs" / "index.html"
    cdn = "https://cdn.jsdelivr.net/npm/x.js"
    html = page_file.read_text(encoding="utf-8")
    page_file.write_text(
        html.replace("</head>", f'<script src="{cdn}"></script></head>', 1), encoding="utf-8"
    )

    # "load", not "networkidle": the off-origin request must not be able to hang the test.
    recorder.page.goto(serve(site) + "computation-graphs/", wait_until="load", timeout=10_000)
    assert cdn in recorder.off_origin_requests()
    assert f"off-origin request: {cdn}" in recorder.problems()


def _navigate_by_nav_link(recorder: Recorder, base_url: str) -> tuple[str, bool]:
    """Click the primary navigation's link to computing-gradients/ from home: returns how
    the page was requested ("document" for a full load, "fetch" or "xhr" for an instant one)
    and whether a variable set on home survived the click."""
    page = recorder.page
    page.goto(base_url, wait_until="networkidle")  # Material reads the sitemap first
    page.evaluate("window.__loadedOnce = true")
    link = page.locator('.md-nav--primary a.md-nav__link[href$="computing-gradients/"]').first
    with page.expect_request(lambda r: r.url == base_url + "computing-gradients/") as request:
        link.click()
    page.wait_for_url(base_url + "computing-gradients/")
    expect(page.locator("article h1")).to_contain_text("Computing Gradients")
    return request.value.resource_type, page.evaluate("window.__loadedOnce === true")


def test_navigation_is_instant(site_url: str, recorder: Recorder) -> None:
    """The site is built for the address it is served at: a nav click fetches the page and
    swaps it in, without a reload."""
    kind, survived = _navigate_by_nav_link(recorder, site_url)
    assert kind in ("fetch", "xhr"), f"the click loaded the page as a {kind}"
    assert survived, "the click reloaded the page"
    canonical = recorder.page.locator('link[rel="canonical"]').get_attribute("href")
    assert canonical == site_url + "computing-gradients/"  # built with SITE_URL=site_url
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_navigation_reloads_under_another_address(
    built_site: Path, serve: Callable[[Path], str], recorder: Recorder
) -> None:
    """Negative proof: the same build served on another port is not under its site_url, and
    Material falls back to full page loads, which the check above would report."""
    kind, survived = _navigate_by_nav_link(recorder, serve(built_site))
    assert (kind, survived) == ("document", False)
