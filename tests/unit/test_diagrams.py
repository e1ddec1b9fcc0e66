"""Hand-made diagrams in docs/diagrams/ render like the generated graphs."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from autograd_traced.drawing.diagrams import diagram_alt, diagram_svg
from autograd_traced.drawing.graph import FONT

DIAGRAMS_DIR = Path(__file__).resolve().parents[2] / "docs" / "diagrams"
DIAGRAMS = sorted(DIAGRAMS_DIR.glob("*.dot"))


def test_there_are_diagrams() -> None:
    assert DIAGRAMS, f"no .dot files in {DIAGRAMS_DIR}"


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.name)
def test_diagram_renders(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    alt = diagram_alt(source)
    assert alt, "the first line must be '// alt: ...'"
    svg = diagram_svg(path.read_text(encoding="utf-8"))
    assert svg.startswith("<svg ")
    assert 'role="img"' in svg
    assert f'aria-label="{html.escape(alt)}"' in svg
    assert "<title>" not in svg, "the alt text is exposed once, as aria-label"
    assert "<!--" not in svg and "<?xml" not in svg
    assert not re.search(r'(width|height)="[\d.]+pt"', svg)
    assert not re.search(r"\sid=", svg), "ids would clash between diagrams of one page"
    assert not re.findall(r'(?:fill|stroke)="#', svg), "use a CSS class, not a colour"
    assert svg == diagram_svg(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.name)
def test_diagram_style_matches_the_generated_graphs(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert f'fontname="{FONT}"' in source
    assert re.search(r'class="ag-', source)


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz dot")
@pytest.mark.parametrize("path", DIAGRAMS, ids=lambda p: p.name)
def test_diagram_has_no_graphviz_warnings(path: Path) -> None:
    result = subprocess.run(
        ["dot", "-Tsvg", str(path)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stderr == ""


def test_retain_graph_diagram_shows_both_paths() -> None:
    svg = diagram_svg((DIAGRAMS_DIR / "retain-graph-paths.dot").read_text(encoding="utf-8"))
    for text in (
        "retain_graph left at None",
        "retain_graph=True",
        "grad(loss, w1)",  # the page's own second request
        "the nodes stay, MulBackward0",  # freeing drops saved values, not the graph
        "RuntimeError: Trying to backward",
        "through the graph a second time",
        "works: dL/dw1 = -0.0898",
    ):
        assert text in svg
    # The page has not introduced backward() yet, and a freed graph can still be walked in part.
    assert "backward()" not in svg and "cannot" not in svg
    assert "node ag-error" in svg and "node ag-ok" in svg


def test_missing_alt_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="alt"):
        diagram_svg("digraph { a -> b }\n")


@pytest.mark.parametrize(
    ("source", "alt"),
    [
        ("// alt: A flow.\ndigraph {}", "A flow."),
        ("\n  //   alt:   Spaces   \ndigraph {}", "Spaces"),
        ("// alt:\ndigraph {}", None),
        ("digraph {} // alt: too late", None),
    ],
)
def test_diagram_alt(source: str, alt: str | None) -> None:
    assert diagram_alt(source) == alt
