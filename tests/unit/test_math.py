"""Build-time KaTeX: formulas become KaTeX HTML; a broken one is an error that quotes it."""

import pytest

from autograd_traced.page_html.katex import MathError, render_math
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
