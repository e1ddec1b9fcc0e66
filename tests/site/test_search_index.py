"""The built search index: math reads as text, tab labels stay out, "leaf" finds both articles."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from autograd_traced.page_html.search_index import MathTextError, tex_to_text
from tests.support.paths import LEAF_DEFINITIONS


@pytest.fixture(scope="module")
def index(built_site: Path) -> dict[str, Any]:
    return json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))


def plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def matches(index: dict[str, Any], term: str) -> list[str]:
    """The sections Material's search returns for `term`: lunr with Material's separator, no
    stemmer (the index's pipeline has none), and a trailing wildcard on each query term."""
    separator = re.compile(index["config"]["separator"])
    found = []
    for doc in index["docs"]:
        tokens = separator.split(plain(f"{doc['title']} {doc['text']}").lower())
        if any(token.startswith(term) for token in tokens):
            found.append(doc["location"])
    return found


def test_previews_show_math_as_text_not_tex(index: dict[str, Any]) -> None:
    tex = [
        (doc["location"], found)
        for doc in index["docs"]
        for found in re.findall(r"\\[A-Za-z]+|\\[(\[)\]]", doc["title"] + doc["text"])
    ]
    assert not tex, f"TeX left in the search index: {tex}"
    with_math = [doc["location"] for doc in index["docs"] if "∂L/∂b" in doc["text"]]
    assert len(with_math) >= 5, with_math  # the sections that write the gradient of L by b


def test_tab_labels_stay_out_of_the_index(index: dict[str, Any]) -> None:
    for doc in index["docs"]:
        assert "ConsoleState after each line" not in doc["text"], doc["location"]
        # A block's title follows the paragraph before it, with no label text in between.
        glued = re.search(r"[^>\s]\s*snippets/[\w/]+\.pycon<pre>", doc["text"])
        assert not glued, f"{doc['location']}: {glued and glued.group(0)}"


def test_leaf_finds_the_definition_in_both_articles(index: dict[str, Any]) -> None:
    found = matches(index, "leaf")
    missing = [location for location in LEAF_DEFINITIONS if location not in found]
    assert not missing, f'"leaf" does not find {missing}; it finds {found}'


@pytest.mark.parametrize(
    ("tex", "text"),
    [
        (r"\frac{\partial L}{\partial b}", "∂L/∂b"),
        (r"\frac{\partial L}{\partial w_1}", "∂L/∂w₁"),
        (r"\sigma(z) = \frac{1}{1 + e^{-z}}", "\N{GREEK SMALL LETTER SIGMA}(z) = 1/(1 + e^(-z))"),
        (r"L = -\big(y \log a\big)", "L = -(y log a)"),
        (r"1.1 \times -0.0817", "1.1 \N{MULTIPLICATION SIGN} -0.0817"),
    ],
)
def test_tex_reads_as_text(tex: str, text: str) -> None:
    assert tex_to_text(tex) == text


def test_a_tex_command_without_a_reading_fails() -> None:
    with pytest.raises(MathTextError, match=r"\\nabla"):
        tex_to_text(r"\nabla L")
