"""Read every page as a reader would, at 1280 and 390 px wide, light and dark: axe-core finds no
serious or critical violation, the text inside diagrams (which axe does not look into) meets
WCAG AA contrast, every control shows its focus, the expected error reads as output, and on a
phone nothing hides past the edge: code and math wrap, tables keep names whole, diagram text
stays at least 11 px (a diagram too wide for that scrolls sideways in its figure, and opens
enlarged from the keyboard).

What the browser measures is collected per page as one list of problems, so a failure says
every place at once. Run with `pytest tests/browser` (the `browser` nox session).
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.support.browser import VIEWS, Recorder, axe_audit
from tests.support.paths import PAGE_URLS, slug

# Every test reads every page in every view: test ids read "computation-graphs-390-dark".
pytestmark = [
    pytest.mark.browser,
    pytest.mark.parametrize("recorder", VIEWS, indirect=True, ids=str),
    pytest.mark.parametrize("page_path", PAGE_URLS, ids=slug),
]

AA_CONTRAST = 4.5  # WCAG 2 AA for body text; diagram labels are all small text
MIN_DIAGRAM_TEXT_PX = 11  # what a phone reader can still read (body text is 16)
BLOCKING_IMPACTS = {"serious", "critical"}


# Colour arithmetic and measurements the checks below share, installed as window.reading.
READING_JS = r"""
() => {
  const parse = (css) => {
    const m = /rgba?\(([^)]+)\)/.exec(css);
    if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return {r, g, b, a};
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const luminance = ({r, g, b}) => {
    const lin = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  };
  const contrast = (x, y) => {
    const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
    return (hi + 0.05) / (lo + 0.05);
  };
  const hex = ({r, g, b}) => '#' + [r, g, b]
    .map((c) => Math.round(c).toString(16).padStart(2, '0')).join('');
  // The opaque colour behind `element`: its and its ancestors' backgrounds, composited.
  const background = (element) => {
    const layers = [];
    for (let e = element; e; e = e.parentElement) {
      const colour = parse(getComputedStyle(e).backgroundColor);
      if (colour && colour.a > 0) layers.push(colour);
      if (colour && colour.a >= 1) break;
    }
    const white = {r: 255, g: 255, b: 255, a: 1};
    return layers.reverse().reduce((below, layer) => over(layer, below), white);
  };
  const shown = (element) => {
    const box = element.getBoundingClientRect();
    return box.width > 0 && box.height > 0 &&
      element.checkVisibility({visibilityProperty: true, opacityProperty: true});
  };
  // Smallest text of an SVG in CSS px as drawn: font size times the rendered scale.
  const smallestTextPx = (svg) => Math.min(...[...svg.querySelectorAll('text')].map((text) => {
    const m = text.getScreenCTM();
    return parseFloat(getComputedStyle(text).fontSize) * Math.hypot(m.a, m.b);
  }));
  const name = (element) => {
    const label = element.getAttribute('aria-label') || element.labels?.[0]?.textContent ||
      element.textContent || '';
    return `<${element.tagName.toLowerCase()} class="${element.getAttribute('class') || ''}">` +
      ` ${JSON.stringify(label.trim().replace(/\s+/g, ' ').slice(0, 50))}`;
  };
  window.reading = {parse, over, contrast, hex, background, shown, smallestTextPx, name};
}
"""

SVG_CONTRAST_JS = r"""
() => {
  const {parse, over, contrast, hex, background, shown} = window.reading;
  const found = [];
  for (const svg of document.querySelectorAll('article svg.ag-diagram')) {
    if (!shown(svg)) continue;
    const page = background(svg);
    for (const text of svg.querySelectorAll('text')) {
      // Text inside a node sits on the node's own fill, if it has one; else on the page.
      const shape = text.parentElement.querySelector(':scope > :is(path, polygon, ellipse)');
      let behind = page;
      const fill = shape && parse(getComputedStyle(shape).fill);
      if (fill) {
        fill.a *= parseFloat(getComputedStyle(shape).fillOpacity);
        behind = over(fill, page);
      }
      const style = getComputedStyle(text);
      const ink = parse(style.fill);
      ink.a *= parseFloat(style.fillOpacity) * parseFloat(style.opacity);
      const ratio = contrast(over(ink, behind), behind);
      found.push({
        diagram: svg.getAttribute('aria-label').slice(0, 40),
        text: text.textContent, ratio, ink: hex(over(ink, behind)), behind: hex(behind),
      });
    }
  }
  return found;
}
"""

FOCUS_JS = r"""
async () => {
  const {parse, shown, name} = window.reading;
  const element = document.activeElement;
  if (!element || element === document.body) return null;
  // A visually hidden input (tab, palette toggle) shows its focus on a label or the tab bar.
  const candidates = [element, ...(element.labels || [])];
  const next = element.nextElementSibling;
  if (element.matches('input') && next?.matches('label')) candidates.push(next);
  const tabs = element.matches('.tabbed-set > input') && element.closest('.tabbed-set');
  if (tabs) candidates.push(tabs.querySelector(':scope > .tabbed-labels'));
  const isRinged = (c) => {
    if (!c || !shown(c)) return false;
    // An outline only: Material draws box-shadows (the tab bar's rule) that mean no focus.
    const style = getComputedStyle(c);
    return style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1 &&
      (parse(style.outlineColor)?.a ?? 1) > 0;
  };
  // Measure what the reader sees once the page reacted to the focus and transitions ended.
  // Material reacts to some focus after a timer (the phone's search opens a beat later), so
  // a control not yet ringed is measured again until a second has passed.
  let ringed = false;
  for (let tries = 0; tries < 10 && !ringed; tries++) {
    if (tries) await new Promise((resolve) => setTimeout(resolve, 100));
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    document.getAnimations().forEach((animation) => animation.finish());
    ringed = candidates.some(isRinged);
  }
  const again = element.dataset.focusVisited === 'yes';
  element.dataset.focusVisited = 'yes';
  return {name: name(element), ringed, again};
}
"""

OUTPUT_STYLE_JS = r"""
() => {
  const problems = [];
  const output = document.querySelector('article .highlight .go');
  for (const traceback of document.querySelectorAll('article .highlight .gt')) {
    const box = traceback.closest('.ag-traceback');
    if (!box) {
      problems.push(`traceback not marked as output: ${traceback.textContent}`);
      continue;
    }
    const [got, want] = [getComputedStyle(box), getComputedStyle(output)];
    for (const property of ['backgroundColor', 'boxShadow', 'color']) {
      if (got[property] !== want[property]) {
        problems.push(`traceback ${property} ${got[property]}, output's ${want[property]}`);
      }
    }
    for (const token of box.querySelectorAll('*')) {
      if (getComputedStyle(token).color !== want.color) {
        const text = token.textContent.slice(0, 30);
        problems.push(`traceback token ${token.className} coloured as code: ${text}`);
      }
    }
  }
  return problems;
}
"""

LAYOUT_JS = r"""
() => {
  const {shown, name} = window.reading;
  const problems = [];
  const article = document.querySelector('article');
  const overflowing = (selector, what) => {
    for (const element of article.querySelectorAll(selector)) {
      if (shown(element) && element.scrollWidth > element.clientWidth + 1) {
        problems.push(`${what} hides ${element.scrollWidth - element.clientWidth}px past its ` +
          `edge (${element.scrollWidth} > ${element.clientWidth}): ${name(element)}`);
      }
    }
  };
  overflowing('pre > code', 'code block');
  overflowing('div.arithmatex, .katex-display', 'display math');
  overflowing('.md-typeset__scrollwrap, .md-typeset__table', 'table');
  const width = article.getBoundingClientRect().width;
  for (const svg of article.querySelectorAll('svg.ag-diagram')) {
    // Wider than the article only inside a figure that scrolls and the keyboard reaches.
    const figure = svg.closest('figure.autograd-diagram');
    const scrolls = figure && figure.getBoundingClientRect().width <= width + 1 &&
      figure.scrollWidth > figure.clientWidth && figure.tabIndex === 0;
    if (shown(svg) && svg.getBoundingClientRect().width > width + 1 && !scrolls) {
      problems.push(`diagram wider than the article: ${name(svg)}`);
    }
  }
  // A line in a table cell may start after a space, or after a dot, dash, slash or comma
  // (torch.autograd.<wbr>grad), never inside a name.
  const range = document.createRange();
  for (const cell of article.querySelectorAll('td, th')) {
    if (!shown(cell)) continue;
    let previous = null;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const box = range.getClientRects()[0];
        if (!box) continue;
        const char = node.data[i];
        if (previous && box.top > previous.top + 2 && !/\s/.test(char) &&
            !/[\s.\-\/,]/.test(previous.char)) {
          const text = cell.textContent.replace(/\s+/g, ' ').trim();
          const where = JSON.stringify(text.slice(0, 60));
          problems.push(`table cell breaks a word before ${JSON.stringify(char)}: ${where}`);
        }
        previous = {top: box.top, char};
      }
    }
  }
  return problems;
}
"""


def _open(recorder: Recorder, site_url: str, page_path: str) -> None:
    """Load the page, check the palette follows the view, open every collapsed block."""
    page = recorder.page
    # "load": every script has run; networkidle's half-second wait per page adds up here.
    response = page.goto(site_url + page_path, wait_until="load")
    assert response is not None and response.ok
    palette = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
    assert palette == recorder.view.palette, f"{recorder.view}: Material chose {palette!r}"
    page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true })")
    page.evaluate(READING_JS)


def _report(page_path: str, recorder: Recorder, problems: list[str]) -> str:
    return f"{len(problems)} problem(s) on /{page_path} at {recorder.view}:\n" + "\n".join(problems)


def test_axe_finds_no_serious_violation(page_path: str, site_url: str, recorder: Recorder) -> None:
    _open(recorder, site_url, page_path)
    results = axe_audit(recorder.page)
    problems = []
    for violation in results["violations"]:
        if violation["impact"] not in BLOCKING_IMPACTS:
            continue
        for node in violation["nodes"]:
            checks = node.get("any", []) + node.get("all", []) + node.get("none", [])
            message = checks[0]["message"] if checks else violation["help"]
            where = ", ".join(map(str, node["target"]))
            problems.append(f"{violation['id']} ({violation['impact']}) at {where}: {message}")
    assert not problems, _report(page_path, recorder, problems)


def test_diagram_text_meets_aa_contrast(page_path: str, site_url: str, recorder: Recorder) -> None:
    _open(recorder, site_url, page_path)
    texts: list[dict[str, Any]] = recorder.page.evaluate(SVG_CONTRAST_JS)
    problems = [
        f"{t['ratio']:.2f}:1 {t['text']!r} ({t['ink']} on {t['behind']}) in {t['diagram']!r}"
        for t in texts
        if t["ratio"] < AA_CONTRAST
    ]
    assert not problems, _report(page_path, recorder, problems)
    if recorder.page.locator("article svg.ag-diagram").count():  # then it measured them
        assert texts, f"no diagram text measured on /{page_path}"


def test_every_control_shows_focus(page_path: str, site_url: str, recorder: Recorder) -> None:
    """Tab through the whole page; each control reached (or its label, or its tab bar) is
    outlined."""
    _open(recorder, site_url, page_path)
    page = recorder.page
    reached: list[str] = []
    problems = []
    for _ in range(300):
        page.keyboard.press("Tab")
        state = page.evaluate(FOCUS_JS)
        if state is None:  # on the body, between the end of the page and its start
            continue
        if state["again"]:
            break  # the walk went round the page once
        reached.append(state["name"])
        if not state["ringed"]:
            problems.append(f"focus not shown on {state['name']}")
    assert len(reached) >= 5, f"the keyboard reached only {reached}"
    assert not problems, _report(page_path, recorder, problems)


def test_expected_error_reads_as_output(page_path: str, site_url: str, recorder: Recorder) -> None:
    _open(recorder, site_url, page_path)
    problems: list[str] = recorder.page.evaluate(OUTPUT_STYLE_JS)
    assert not problems, _report(page_path, recorder, problems)


def test_nothing_hides_past_the_edge(page_path: str, site_url: str, recorder: Recorder) -> None:
    """Code and display math wrap, tables fit and keep names whole, diagrams fit."""
    _open(recorder, site_url, page_path)
    problems: list[str] = recorder.page.evaluate(LAYOUT_JS)
    assert not problems, _report(page_path, recorder, problems)


def test_diagram_text_is_legible_and_a_cut_diagram_opens_enlarged(
    page_path: str, site_url: str, recorder: Recorder
) -> None:
    """Every diagram's text is at least 11 px, on a phone too: one that does not fit its
    column at that size scrolls sideways in its figure, which the keyboard reaches, and its
    Enlarge button, pressed with the keyboard, opens it in a dialog where the text is at
    least 11 px; Escape closes it and focus comes back."""
    _open(recorder, site_url, page_path)
    page = recorder.page
    problems = []
    # The page's figures: a player's drawings are the tracer's (tests/browser/test_tracer.py).
    diagrams = page.locator("article figure.autograd-diagram svg.ag-diagram")
    for index in range(diagrams.count()):
        svg = diagrams.nth(index)
        label = (svg.get_attribute("aria-label") or "")[:50]
        svg.scroll_into_view_if_needed()
        smallest = svg.evaluate("svg => window.reading.smallestTextPx(svg)")
        if smallest < MIN_DIAGRAM_TEXT_PX:
            problems.append(f"text at {smallest:.1f}px: {label!r}")
        cut = svg.evaluate(
            "svg => { const f = svg.closest('figure'); return f.scrollWidth > f.clientWidth + 1 }"
        )
        if not cut:
            continue
        if svg.evaluate("svg => svg.closest('figure').tabIndex") != 0:
            problems.append(f"cut, and its figure is no tab stop to scroll it by: {label!r}")
        button = svg.locator("xpath=ancestor::figure[1]/following-sibling::button[1]")
        if button.count() == 0 or not button.is_visible():
            problems.append(f"cut, and no Enlarge button: {label!r}")
            continue
        button.focus()
        page.keyboard.press("Enter")
        dialog = page.locator("dialog.ag-zoom[open]")
        expect(dialog).to_be_visible()
        inside = dialog.evaluate("d => d.contains(document.activeElement)")
        enlarged = dialog.locator("svg.ag-diagram").evaluate(
            "svg => window.reading.smallestTextPx(svg)"
        )
        view = dialog.locator(".ag-zoom__view")
        focusable = view.evaluate("v => v.tabIndex >= 0")
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        returned = button.evaluate("b => b === document.activeElement")
        if not inside:
            problems.append(f"focus did not move into the enlarged view of {label!r}")
        if enlarged < MIN_DIAGRAM_TEXT_PX:
            problems.append(f"enlarged text still {enlarged:.1f}px: {label!r}")
        if not focusable:
            problems.append(f"the enlarged view of {label!r} cannot be scrolled by keyboard")
        if not returned:
            problems.append(f"focus did not return to the Enlarge button of {label!r}")
    assert not problems, _report(page_path, recorder, problems)
