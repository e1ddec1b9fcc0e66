"""Ruff over snippets: findings point at the snippet's own lines."""

from pathlib import Path

from autograd_traced.tools.lint_snippets import lint, main, shadow
from tests.support.paths import ROOT


def test_shadow_keeps_line_numbers() -> None:
    text = ">>> x = 1\n>>> print(x)\n1\n>>> for i in []:\n...     pass\n...\n"
    assert shadow(text) == "x = 1\nprint(x)\n\nfor i in []:\n    pass\n\n"


def test_findings_name_the_snippet_line(tmp_path: Path) -> None:
    (tmp_path / "snippets").mkdir()
    snippet = tmp_path / "snippets" / "bad.pycon"
    snippet.write_text(">>> x = 1\n>>> print( x )\n1\n>>> y == 2\n")
    problems = lint(tmp_path, [snippet])
    assert "snippets/bad.pycon:2: not ruff-formatted, ruff writes 'print(x)'" in problems
    assert any(p.startswith("snippets/bad.pycon:4:1: B015") for p in problems), problems


def test_the_sites_snippets_are_clean() -> None:
    assert main([str(ROOT)]) == 0
