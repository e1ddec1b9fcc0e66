"""Diagrams and players' skipped parts are kept from the search plugin and put back whole."""

import json
import re
from pathlib import Path

from autograd_traced.page_html.search_aside import put_back, set_aside

SVG = '<svg role="img"><title>Loss &amp; graph</title><text>MulBackward0</text></svg>'


PLAYER_PART = '<ul class="ag-tracer__vars" data-search-exclude><li>b 0.0000</li></ul>'
GRAPH = f'<figure class="ag-tracer__graph" data-search-exclude>\n{SVG}\n</figure>'


def test_set_aside_leaves_the_text_alternative_and_put_back_restores_the_page() -> None:
    page = f"<p>before</p>{SVG}<p>between</p>{SVG}<li>{PLAYER_PART}{GRAPH}</li>"
    aside, kept = set_aside(page)
    assert "<svg" not in aside and "MulBackward0" not in aside and "b 0.0000" not in aside
    assert aside.count("Loss &amp; graph") == 2  # the figures' alternative; not the player's
    assert put_back(aside, kept) == page


def test_the_search_index_holds_each_diagrams_words_once(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text())
    text = " ".join(doc["text"] for doc in index["docs"])
    assert "<svg" not in text and "<text" not in text
    assert "saved self (x1) = 1.1000" not in text  # a graph node's label, not words
    html = "".join(page.read_text() for page in built_site.rglob("*.html"))
    # The figures' (a player's drawings are kept out of the index on purpose).
    figure = r'<figure class="autograd-diagram"[^>]*>\s*<svg\b[^>]*\baria-label="([^"]*)"'
    titles = re.findall(figure, html)
    assert titles
    for title in set(titles):
        assert text.count(title) == titles.count(title), title[:60]


def test_indentation_goes_but_not_inside_pre_or_attribute_values() -> None:
    from autograd_traced.page_html.whitespace import strip_indentation

    page = '<div>\n    <p>a</p>\n  <pre>\n  kept</pre>\n<div data-copy="for i in x:\n    y">'
    assert strip_indentation(page) == (
        '<div>\n<p>a</p>\n<pre>\n  kept</pre>\n<div data-copy="for i in x:\n    y">'
    )


def test_no_transcript_or_player_part_reaches_the_search_plugin(built_site: Path) -> None:
    # The pages as built hold what set_aside saw, put back. Whatever of these it leaves, the
    # plugin parses tag by tag for nothing: a transcript's copy text once hid every transcript
    # from set_aside. (The lab's answers are skipped by the index too, and parsed: prose.)
    skipped = re.compile(r'class="(?:highlight|ag-tracer__[\w-]+)" data-search-exclude')
    pages = sorted(built_site.rglob("*.html"))
    assert any(skipped.search(page.read_text(encoding="utf-8")) for page in pages)
    for page in pages:
        left, _ = set_aside(page.read_text(encoding="utf-8"))
        assert not skipped.search(left), page.relative_to(built_site)
