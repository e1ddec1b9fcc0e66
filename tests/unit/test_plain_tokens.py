"""Names and whitespace lose their highlighter spans, because nothing draws them differently."""

from __future__ import annotations

import re
from pathlib import Path

import material

from autograd_traced.page_html.plain_tokens import PLAIN_CLASSES, unwrap_plain_tokens
from tests.support.paths import DOCS

MATERIAL_CSS = sorted(
    (Path(material.__file__).parent / "templates/assets/stylesheets").glob("*.css")
)


def test_names_and_whitespace_are_unwrapped_and_styled_tokens_kept() -> None:
    html = (
        '<span class="n">w1</span><span class="w"> </span><span class="o">=</span> '
        '<span class="n">torch</span><span class="o">.</span><span class="n">tensor</span>'
        '<span class="p">(</span><span class="mf">2.2</span><span class="p">)</span>'
    )
    assert unwrap_plain_tokens(html) == (
        'w1 <span class="o">=</span> torch<span class="o">.</span>tensor'
        '<span class="p">(</span><span class="mf">2.2</span><span class="p">)</span>'
    )


def test_the_theme_draws_them_in_the_codes_own_colour() -> None:
    """A theme that coloured names or whitespace would make the unwrapping visible."""
    assert len(MATERIAL_CSS) == 2, MATERIAL_CSS  # main and palette
    ours = sorted((DOCS / "stylesheets").glob("*.css"))
    for sheet in [*MATERIAL_CSS, *ours]:
        css = sheet.read_text()
        names = re.findall(r"--md-code-hl-name-color:([^;}]*)", css)
        assert set(names) <= {"var(--md-code-fg-color)"}, f"{sheet.name}: names coloured {names}"
        for token in PLAIN_CLASSES:
            rules = re.findall(rf"\.highlight \.{token}\b[^{{]*{{[^}}]*}}", css)
            styled = [rule for rule in rules if "--md-code-hl-name-color" not in rule]
            assert not styled, f"{sheet.name} styles .{token}: {styled}"
    assert any(
        "--md-code-hl-name-color:var(--md-code-fg-color)" in s.read_text() for s in MATERIAL_CSS
    )
