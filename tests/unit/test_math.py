"""Build-time KaTeX: formulas become KaTeX HTML; a broken one is an error that quotes it."""

import pytest

from autograd_traced.page_html import katex
from autograd_traced.page_html.katex import MathError, render_math, warm_up
from tests.support.paths import DOCS

KATEX_JS = DOCS / "assets" / "katex" / "katex.min.js"


def test_inline_and_display_math_render() -> None:
    page = (
        '<p><span class="arithmatex">\\(a &lt; 1\\)</span></p>'
        '<div class="arithmatex">\\[\\frac{\\partial L}{\\partial b} = a - y\\]</div>'
    )
    html = render_math(page, KATEX_JS)
    assert html.count('class="katex"') == 2
    assert 'class="katex-display"' in html
    assert "\\frac" not in html.split("<annotation")[0]  # TeX survives only in MathML's annotation


def test_page_without_math_is_untouched() -> None:
    assert render_math("<p>no math</p>", KATEX_JS) == "<p>no math</p>"


def test_broken_formula_names_itself() -> None:
    with pytest.raises(MathError, match=r"KaTeX cannot render '\\\\frac\{1\}'"):
        render_math('<span class="arithmatex">\\(\\frac{1}\\)</span>', KATEX_JS)


def test_a_warmed_up_renderer_is_the_one_pages_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(katex, "_renderers", {})
    warm_up(KATEX_JS)
    (started,) = katex._renderers.values()
    assert started.process.poll() is None  # running before any page asked for it
    render_math('<span class="arithmatex">\\(x\\)</span>', KATEX_JS)
    assert list(katex._renderers.values()) == [started]


def test_without_node_the_warm_up_is_silent_and_the_page_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(katex, "_renderers", {})
    monkeypatch.setenv("PATH", "/nonexistent")
    warm_up(KATEX_JS)
    with pytest.raises(MathError, match=r"Node\.js is needed"):
        render_math('<span class="arithmatex">\\(x\\)</span>', KATEX_JS)
