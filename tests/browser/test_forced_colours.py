"""Marks that do not rely on colour alone, with and without Windows high contrast (forced
colours, which drop tints and shadows): a player's current line and the rows of what changed
carry a bar the other lines and rows do not, and every line a snippet printed, errors
included, keeps its bar.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.browser

# A step that changes a variable, in a transcript that raises: every kind of mark at once.
RAISING_STEP = "pitfalls/#trace-lost-detach-line-2"
MIN_CONTRAST = 3.0  # WCAG's non-text contrast, for a bar against the page

MARKS_JS = r"""
() => {
  const parse = (css) => {
    const m = /rgba?\(([^)]+)\)/.exec(css);
    const [r, g, b, a = 1] = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return {r, g, b, a};
  };
  const luminance = ({r, g, b}) => {
    const lin = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const page = parse(getComputedStyle(document.body).backgroundColor);
  // The contrast of an element's left bar (a border, or an inset shadow) against the page.
  const bar = (element) => {
    const style = getComputedStyle(element);
    let colour = null;
    if (parseFloat(style.borderLeftWidth) >= 2 && style.borderLeftStyle !== 'none') {
      colour = parse(style.borderLeftColor);
    } else if (style.boxShadow.includes('inset')) {
      colour = parse(style.boxShadow);
    }
    if (!colour || colour.a < 0.5) return 1;
    const [hi, lo] = [luminance(colour), luminance(page)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const root = document.querySelector('#trace-lost-detach');
  const lines = [...root.querySelectorAll('.highlight .ag-tracer__line')];
  root.querySelector('.ag-tracer__all').open = true;
  const measure = (elements) => elements.map(bar);
  return {
    'current line': measure(lines.filter((l) => l.matches('.is-current'))),
    'other lines': measure(lines.filter((l) => !l.matches('.is-current'))),
    'changed rows': measure([...root.querySelectorAll('.ag-tracer__now > div .ag-tracer__var')]),
    'all variables rows': measure([...root.querySelectorAll('.ag-tracer__all .ag-tracer__var')]),
    'printed lines': measure([...document.querySelectorAll('article .highlight .go')]),
    'error lines': measure([...document.querySelectorAll('article .highlight .ag-traceback')]),
  };
}
"""
MARKED = ("current line", "changed rows", "printed lines", "error lines")
UNMARKED = ("other lines", "all variables rows")


@pytest.fixture(params=["none", "active"], ids=lambda forced: f"forced-colours-{forced}")
def page(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.emulate_media(forced_colors=request.param)
    yield page
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_marks_do_not_rely_on_colour(site_url: str, page: Page, scheme: str) -> None:
    page.emulate_media(color_scheme=scheme)
    page.goto(site_url + RAISING_STEP, wait_until="networkidle")
    # Made live by tracer.js once Material's document$ says the page is there (CI once
    # measured before that: no "all variables" panel yet).
    page.locator("#trace-lost-detach.is-live .ag-tracer__all").wait_for(state="attached")
    bars: dict[str, list[float]] = page.evaluate(MARKS_JS)
    problems = []
    for kind in MARKED:
        if not bars[kind]:
            problems.append(f"no {kind} measured")
        faint = [f"{ratio:.2f}:1" for ratio in bars[kind] if ratio < MIN_CONTRAST]
        if faint:
            problems.append(f"{kind}: {len(faint)} without a visible bar ({faint[:3]})")
    for kind in UNMARKED:
        marked = [f"{ratio:.2f}:1" for ratio in bars[kind] if ratio > 1.01]
        if marked:
            problems.append(f"{kind}: {len(marked)} with a bar, as if marked ({marked[:3]})")
    assert not problems, "\n".join(problems)
