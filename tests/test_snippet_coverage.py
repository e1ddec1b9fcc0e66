"""Nothing a page uses escapes the tests: every snippet it names is collected and exists.

Sybil's stock Markdown parser silently skips fences with attributes; these tests fail if our
parser ever misses a fence, so "0 collected" can never pass for "all good".
"""

import re

import pytest

from autograd_traced.snippets import EXEC_FENCE_RE, SNIPPET_MENTION_RE, snippet_paths
from conftest import snippet_pages
from tests.paths import ARTICLES, PAGES, ROOT, SNIPPETS


def collected(page) -> list[str]:
    return [example.parsed.path for example in snippet_pages.parse(page)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_snippet_a_page_mentions_is_collected(page) -> None:
    text = page.read_text()
    assert collected(page) == snippet_paths(text)
    assert sorted(set(SNIPPET_MENTION_RE.findall(text))) == sorted(set(collected(page)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_pycon_exec_fence_names_a_snippet_that_exists(page) -> None:
    text = page.read_text()
    pycon_exec = [f for f in EXEC_FENCE_RE.findall(text) if re.match(r"\s*```+\s*pycon\b", f)]
    assert len(pycon_exec) == len(snippet_paths(text))
    for path in snippet_paths(text):
        assert path, f"{page.name}: a pycon fence has no file option"
        assert (ROOT / path).is_file(), f"{page.name} uses {path}, which does not exist"


def test_each_article_runs_snippets() -> None:
    for article in ARTICLES:
        assert len(collected(article)) >= 4, article.name


def test_every_snippet_file_is_used_by_a_page() -> None:
    used = {path for page in PAGES for path in snippet_paths(page.read_text())}
    on_disk = {p.relative_to(ROOT).as_posix() for p in SNIPPETS.rglob("*.pycon")}
    assert on_disk, "no snippet files found"
    assert on_disk - used == set(), "snippet files no page uses"
