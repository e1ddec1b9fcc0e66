"""The real site builds strictly, and every executable fence left its output on the page."""

import re
from pathlib import Path

import pytest
import torch

from autograd_traced.snippets import EXEC_FENCE_RE, snippet_paths
from tests.broken_copy import BrokenSite
from tests.build import build
from tests.paths import ARTICLES, DOCS, PAGES, ROOT


@pytest.fixture(scope="session")
def build_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    site = tmp_path_factory.mktemp("site")
    result = build(ROOT, site)
    assert result.ok, result.log
    return site, result.log


@pytest.fixture(scope="session")
def built_site(build_log: tuple[Path, str]) -> Path:
    return build_log[0]


def page_html(site: Path, page: Path) -> str:
    name = "index.html" if page.stem == "index" else f"{page.stem}/index.html"
    return (site / name).read_text()


def test_strict_build_passes_without_warnings(build_log: tuple[Path, str]) -> None:
    _, log = build_log
    assert "Documentation built" in log
    assert "WARNING" not in log, log


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_executable_fence_rendered(built_site: Path, page: Path) -> None:
    markdown, html = page.read_text(), page_html(built_site, page)
    for path in snippet_paths(markdown):
        assert f'">{path}</a></span><pre>' in html, f"{path} shows no transcript"
    figures = len([f for f in EXEC_FENCE_RE.findall(markdown) if "pycon" not in f])
    assert html.count('<figure class="autograd-diagram">') == figures
    assert html.count("<svg") >= figures


def test_articles_show_outputs_and_expected_error(built_site: Path) -> None:
    graphs, gradients = (page_html(built_site, page) for page in ARTICLES)
    assert "z = 2.4200   a = 0.9183   loss = 0.0852" in graphs
    assert "RuntimeError: Trying to backward through the graph a second time" in graphs
    assert "w1.grad = -0.0898   b.grad = -0.0817" in gradients
    for html in (graphs, gradients):
        assert "State after each line" in html
        assert "<table>" in html


def test_footer_names_the_torch_release_that_ran(built_site: Path) -> None:
    html = page_html(built_site, DOCS / "index.md")
    assert f"produced by PyTorch {torch.__version__}" in html


def test_html_has_no_raw_fence_left(built_site: Path) -> None:
    for page in PAGES:
        assert not re.search(r'exec="on"', page_html(built_site, page)), page.name


def test_two_builds_produce_identical_html(built_site: Path, broken_site: BrokenSite) -> None:
    # The harness's copy holds the same pages, untouched, next to its broken ones; the real
    # command built it in another process, from another folder.
    broken_site.build.result()
    again = broken_site.root / "site"
    pages = sorted(p.relative_to(built_site) for p in built_site.rglob("*.html"))
    assert len(pages) == len(PAGES) + 1  # and 404.html
    for page in pages:
        assert (built_site / page).read_text() == (again / page).read_text(), page
