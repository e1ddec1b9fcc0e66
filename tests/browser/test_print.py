"""A page with players printed to PDF by Chromium, read back with pdftotext (poppler-utils): no
button is printed; each player prints where its program ends, what its last line changed and
its graph on one page, without leaving the page before them half empty.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.paths import ARTICLES, url_path

pytestmark = pytest.mark.browser

PAGES_WITH_PLAYERS = [page for page in ARTICLES if 'trace="on"' in page.read_text()]
PDFTOTEXT = shutil.which("pdftotext")
MIN_FILLED = 0.5  # of its height, the page before a player's last step

# Each player's last step, in page order: its summary, and the last text of its graph (or of
# its note, when there is no graph).
LAST_STEPS_JS = """
() => [...document.querySelectorAll('.ag-tracer.is-live')].map((root) => {
  const step = root.querySelector('.ag-tracer__steps > li:last-child');
  const drawn = step.dataset.graph && document.getElementById(step.dataset.graph);
  const texts = drawn ? [...drawn.querySelectorAll('.ag-tracer__graph svg text')] : [];
  const last = texts.length ? texts.at(-1) : step.querySelector('.ag-tracer__graph-note');
  return [step.querySelector('.ag-tracer__summary').textContent, last.textContent];
})
"""
# The buttons' labels, but those the prose also says ("press **Next ▶**").
BUTTONS_JS = """
() => [...document.querySelectorAll('article button')]
  .map((button) => button.innerText.trim())
  .filter((label) => label && ![...document.querySelectorAll('article p')]
    .some((p) => p.textContent.includes(label)))
"""
WORD_RE = re.compile(r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="[\d.]+" yMax="([\d.]+)">')
PAGE_RE = re.compile(r'<page width="[\d.]+" height="([\d.]+)">(.*?)</page>', re.DOTALL)


def _words(text: str) -> str:
    return " ".join(text.split())


def _pdftotext(pdf: Path, *options: str) -> str:
    assert PDFTOTEXT, "pdftotext not found: `apt-get install poppler-utils`"
    run = subprocess.run([PDFTOTEXT, *options, str(pdf), "-"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("article", PAGES_WITH_PLAYERS, ids=lambda page: page.stem)
def test_players_print_where_their_program_ends(
    site_url: str, browser: Browser, article: Path, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(site_url + url_path(article), wait_until="networkidle")
    assert page.locator(".ag-tracer.is-live").count(), "no live player to print"
    steps: list[list[str]] = page.evaluate(LAST_STEPS_JS)
    buttons: list[str] = page.evaluate(BUTTONS_JS)
    pdf = tmp_path / f"{article.stem}.pdf"
    page.pdf(path=pdf, format="A4")
    context.close()

    pages = [_words(text) for text in _pdftotext(pdf, "-layout").split("\f")]
    problems = [f"button {label!r} printed" for label in buttons if any(label in p for p in pages)]
    boxes = PAGE_RE.findall(_pdftotext(pdf, "-bbox-layout"))

    def filled(number: int) -> float:
        height, words = boxes[number]
        return max((float(y) for y in WORD_RE.findall(words)), default=0) / float(height)

    number, offset = 0, 0  # each player is looked for after the one before it
    for first, last in steps:
        summary = _words(first).split(". ")[0] + "."  # "Line 5 of 5."
        while number < len(pages) and (at := pages[number].find(summary, offset)) < 0:
            number, offset = number + 1, 0
        if number == len(pages):
            problems.append(f"last step not printed: {summary!r}")
            break
        if _words(last) not in pages[number]:
            problems.append(f"state and graph split at page {number + 1}: {summary!r}")
        # Kept whole, the state and graph must not leave the page before them half empty.
        if number > 0 and filled(number - 1) < MIN_FILLED:
            problems.append(f"page {number} {filled(number - 1):.0%} filled, before {summary!r}")
        offset = at + len(summary)

    assert not problems, f"{article.stem} printed:\n" + "\n".join(problems)
