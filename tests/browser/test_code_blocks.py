"""Code blocks on a phone and on a desktop: the copy button covers no code, a wrapped line of code
goes on under its code (not under the `>>>`), a block's title breaks only after a slash, a table
header keeps its code names whole, the title opens its snippet as text, and the blocks' button
bars add no landmarks.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page

from tests.support.browser import DESKTOP_LIGHT, PHONE_WIDTH, Recorder, View
from tests.support.paths import PAGE_URLS, ROOT, slug

pytestmark = [
    pytest.mark.browser,
    pytest.mark.parametrize("page_path", PAGE_URLS, ids=slug),
]
WIDTHS = [DESKTOP_LIGHT, View(PHONE_WIDTH, "light")]
by_width = pytest.mark.parametrize("recorder", WIDTHS, indirect=True, ids=lambda v: f"{v.width}")

# One character's box at a time, of every text node under `root` that `keep` accepts.
CHARACTERS_JS = r"""
window.characters = function* (root, keep = () => true) {
  const range = document.createRange();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!keep(node)) continue;
    for (let i = 0; i < node.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      yield {node, char: node.data[i], box: box && box.width ? box : null};
    }
  }
};
"""

# Code characters (not spaces) drawn under a block's copy button.
COVERED_JS = r"""
() => {
  const covered = [];
  for (const button of document.querySelectorAll('article pre > .md-code__nav')) {
    const over = button.getBoundingClientRect();
    const code = button.parentElement.querySelector(':scope > code');
    const crosses = (box) => box.right > over.left && box.left < over.right &&
      box.bottom > over.top && box.top < over.bottom;
    const window_ = code.getBoundingClientRect();  // a player's code scrolls in its window
    for (const {node, char, box} of characters(code)) {
      if (!box) continue;
      const seen = box.top >= window_.top && box.bottom <= window_.bottom;
      if (/\S/.test(char) && crosses(box) && seen) {
        covered.push(node.data.trim().slice(0, 40));
        break;
      }
    }
  }
  return covered;
}
"""

# Lines of code that wrap: where each row after a line's first starts, against where its code
# starts (after its prompt). A line starts after a newline; rows are told apart by their top.
HANGING_JS = r"""
() => {
  const found = [];
  for (const code of document.querySelectorAll('article .highlight pre > code')) {
    let line = null, top = null, newline = true;
    for (const {node, char, box} of characters(code)) {
      if (newline) {
        const prompt = node.parentElement.matches('.gp');
        line = prompt ? {text: '', start: null} : null;
        newline = false;
      }
      if (char === '\n') { newline = true; continue; }
      if (!line || !box) continue;
      line.text += char;
      if (node.parentElement.matches('.gp')) { line.start = box.right; top = box.top; continue; }
      if (box.top > top + 2 && /\S/.test(char)) {
        found.push({text: line.text.trim().slice(0, 50), indent: box.left - line.start});
      }
      top = box.top;
    }
  }
  return found;
}
"""

# Where a block's title (a snippet's path) or a table header's code breaks to a new line.
BREAKS_JS = r"""
(selector) => {
  const breaks = [];
  for (const element of document.querySelectorAll(selector)) {
    if (!element.getClientRects().length) continue;
    let top = null, after = null;  // the last line's top; the character before this one
    for (const {char, box} of characters(element)) {
      if (box && top !== null && box.top > top + 2) {
        breaks.push({text: element.textContent.trim(), after, before: char});
      }
      if (box) top = box.top;
      after = char;
    }
  }
  return breaks;
}
"""


# Material sets each code block up (its copy button) as it comes into view (content.lazy):
# every shown block is brought into view, and each must then have its button.
MOUNT_EVERY_BLOCK_JS = r"""
async () => {
  const blocks = [...document.querySelectorAll('article .highlight > pre > code')]
    .filter((code) => code.getClientRects().length);
  for (const code of blocks) {
    code.scrollIntoView({block: 'center'});
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  }
  const mounted = () => blocks.every((code) => code.parentElement.querySelector('.md-code__nav'));
  for (let frame = 0; frame < 120 && !mounted(); frame++)
    await new Promise((done) => requestAnimationFrame(done));
  window.scrollTo(0, 0);
  return blocks.filter((code) => !code.parentElement.querySelector('.md-code__nav')).length;
}
"""


def _mount_every_block(page: Page) -> None:
    unmounted = page.evaluate(MOUNT_EVERY_BLOCK_JS)
    assert not unmounted, f"{unmounted} code blocks got no copy button once in view"


def _open(recorder: Recorder, url: str) -> Page:
    page = recorder.page
    page.goto(url, wait_until="networkidle")
    page.evaluate("document.querySelectorAll('article details').forEach(d => { d.open = true })")
    page.evaluate(CHARACTERS_JS)
    return page


@by_width
def test_copy_button_covers_no_code(page_path: str, site_url: str, recorder: Recorder) -> None:
    page = _open(recorder, site_url + page_path)
    _mount_every_block(page)
    assert page.locator("article pre > .md-code__nav").count(), "no copy button measured"
    covered = page.evaluate(COVERED_JS)
    # A player's code scrolls under its button: at its last line too.
    for player in page.locator(".ag-tracer.is-live").all():
        player.evaluate("root => root.tracerGo(Infinity)")
        covered += page.evaluate(COVERED_JS)
    assert not covered, f"the copy button covers code in {len(covered)} blocks: {covered}"


@by_width
def test_wrapped_code_goes_on_under_its_code(
    page_path: str, site_url: str, recorder: Recorder
) -> None:
    page = _open(recorder, site_url + page_path)
    continued = page.evaluate(HANGING_JS)
    under_prompt = [line["text"] for line in continued if line["indent"] < -1]
    assert not under_prompt, f"lines that go on under their >>>: {under_prompt}"
    if recorder.view.width == PHONE_WIDTH and page.locator("article .highlight .gp").count() > 20:
        assert continued, "no wrapped line measured"


@by_width
def test_titles_and_headers_keep_names_whole(
    page_path: str, site_url: str, recorder: Recorder
) -> None:
    page = _open(recorder, site_url + page_path)
    titles = page.evaluate(BREAKS_JS, "article .highlight > .filename")
    inside_a_name = [b for b in titles if b["after"] != "/"]
    assert not inside_a_name, f"titles broken inside a name: {inside_a_name}"
    headers = page.evaluate(BREAKS_JS, "article th code")
    inside_code = [b for b in headers if b["before"] != " " and b["after"] != " "]
    assert not inside_code, f"table headers broken inside their code: {inside_code}"


def test_a_title_opens_its_snippet_as_text(
    page_path: str, site_url: str, recorder: Recorder
) -> None:
    page = recorder.page
    page.goto(site_url + page_path, wait_until="networkidle")
    titles = page.locator("article .highlight > .filename > a")
    if not titles.count():
        pytest.skip(f"/{page_path} has no console block")
    title = titles.first
    path = (title.text_content() or "").strip()
    downloads: list[object] = []
    page.on("download", lambda download: downloads.append(download))
    # The response itself: a navigation's may be None when it loads while it is being awaited.
    with page.expect_response(lambda response: response.url.endswith(".pycon.txt")) as shown:
        title.click()
    page.wait_for_load_state()
    response = shown.value
    assert not downloads, f"{path}: the title downloads the snippet instead of showing it"
    assert response is not None and response.ok
    assert response.headers["content-type"].startswith("text/plain"), response.headers
    assert page.locator("body").inner_text().strip() == (ROOT / path).read_text().strip()


LANDMARKS_JS = r"""
() => [...document.querySelectorAll('nav:not([role="none"], [role="presentation"])')]
  .map((nav) => nav.getAttribute('aria-label') || nav.getAttribute('aria-labelledby') || '')
"""


def test_code_blocks_add_no_landmarks(page_path: str, site_url: str, recorder: Recorder) -> None:
    page = _open(recorder, site_url + page_path)
    _mount_every_block(page)
    names = page.evaluate(LANDMARKS_JS)
    unnamed = names.count("")
    assert not unnamed, f"{unnamed} unnamed navigation landmarks beside {names}"
