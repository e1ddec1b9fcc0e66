"""Render Graphviz DOT to an SVG element that can be inlined in a page, in either palette.

No XML prolog or comments (they carry the Graphviz version, which would make builds differ),
no fixed size, no white background, colours from ``currentColor`` and CSS classes (styled by
``docs/stylesheets/diagrams.css``), prefixed ids and an accessible name. Kept apart from
``graph`` so that hand-made diagrams render without importing torch.
"""

from __future__ import annotations

import hashlib
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Colours used in DOT only as markers: render_svg turns each into `currentColor` plus this
# CSS class, so the palette lives in diagrams.css and follows the light/dark scheme.
# (They are still sensible colours for a plain `dot -Tpng` preview.)
SAVED_COLOUR = "#546e7a"
FREED_COLOUR = "#b00020"
REQUIRES_GRAD_COLOUR = "#00796b"
TEXT_CLASSES: dict[str, str] = {
    SAVED_COLOUR: "ag-saved-value",
    FREED_COLOUR: "ag-freed",
    REQUIRES_GRAD_COLOUR: "ag-requires-grad",
}


def _dot_command() -> list[str]:
    dot = shutil.which("dot")
    if dot:
        return [dot]
    # graphviz-pure (PyPI) ships a `dot`-compatible binary named graphviz-pure, no Python API.
    pure = shutil.which("graphviz-pure") or shutil.which(
        "graphviz-pure", path=str(Path(sys.executable).parent)
    )
    if pure:
        return [pure]
    raise RuntimeError(
        "Graphviz `dot` was not found on PATH. Install Graphviz (Debian/Ubuntu: "
        "`apt-get install graphviz`, macOS: `brew install graphviz`) or the PyPI package "
        "`graphviz-pure` (`pip install graphviz-pure`)."
    )


def slugify(text: str) -> str:
    """A short id-safe slug; a hash suffix keeps different long texts apart."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:32].strip("-")
    digest = hashlib.sha1(text.encode()).hexdigest()[:6]
    return f"ag-{words}-{digest}" if words else f"ag-{digest}"


# The canvas Graphviz paints first (Graphviz 2.x: stroke transparent; graphviz-pure: none).
_BACKGROUND = re.compile(
    r'<polygon fill="(?:white|#ffffff|transparent)" stroke="(?:transparent|none)"[^>]*/>'
)


def _style_text(match: re.Match[str]) -> str:
    tag = match.group(0)
    colour = re.search(r' fill="(#[0-9a-fA-F]{6})"', tag)
    if colour and colour.group(1).lower() in TEXT_CLASSES:
        css_class = TEXT_CLASSES[colour.group(1).lower()]
        return tag.replace(colour.group(0), f' fill="currentColor" class="{css_class}"')
    if " fill=" not in tag:
        return tag[:-1] + ' fill="currentColor">'
    return tag


def _font_stack(match: re.Match[str]) -> str:
    family = match.group(1)
    generic = "monospace" if "mono" in family.lower() else "sans-serif"
    return f'font-family="{family}, {generic}"'


def render_svg(dot_source: str, *, alt: str, id_prefix: str | None = None) -> str:
    """Render DOT to an SVG element ready to inline in HTML, themed by CSS classes.

    Ids are prefixed with `id_prefix` (default: a slug of `alt`) so several diagrams can share a
    page. `alt` is the accessible name (aria-label) and nothing else: no <title> repeats it,
    so screen readers read it once and the search index holds only the words drawn. The
    per-node <title> elements Graphviz writes (tooltips like "n3") are dropped too.
    """
    result = subprocess.run(
        [*_dot_command(), "-Tsvg"],
        input=dot_source,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"dot failed (exit {result.returncode}):\n{result.stderr}")
    svg = result.stdout
    svg = re.sub(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", "", svg, flags=re.DOTALL)
    svg = re.sub(r"<title>.*?</title>", "", svg, flags=re.DOTALL)
    svg = svg.replace("&#45;", "-")  # Graphviz escapes every hyphen, even inside class names
    svg = _BACKGROUND.sub("", svg)  # the page's own background should show through
    svg = re.sub(r'(fill|stroke)="(?:black|#000000)"', r'\1="currentColor"', svg)
    svg = re.sub(r"<text\b[^>]*>", _style_text, svg)
    # Layout was measured with DejaVu; a reader without it should still get a similar face.
    svg = re.sub(r'font-family="([^",]+)"', _font_stack, svg)

    prefix = id_prefix or slugify(alt)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'(href="#|url\(#)', rf"\1{prefix}-", svg)

    open_tag = re.search(r"<svg\b[^>]*>", svg, flags=re.DOTALL)
    if open_tag is None:
        raise RuntimeError(f"dot produced no <svg> element:\n{svg[:200]}")
    width = re.search(r'\bwidth="([\d.]+)pt"', open_tag.group(0))
    view_box = re.search(r'viewBox="([^"]+)"', open_tag.group(0))
    if width is None or view_box is None:
        raise RuntimeError(f"unexpected <svg> element from dot: {open_tag.group(0)}")
    # The natural size (pt -> CSS px) as a width that may shrink: a percentage width would
    # collapse to 300px inside Material's `figure { width: fit-content }`.
    natural = round(float(width.group(1)) * 4 / 3)
    new_open = (
        '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
        f' class="ag-diagram" viewBox="{view_box.group(1)}"'
        f' style="width: {natural}px; max-width: 100%; height: auto"'
        f' role="img" aria-label="{html.escape(alt)}">'
    )
    body = svg[open_tag.end() :]
    lines = [line.rstrip() for line in body.splitlines()]
    # No blank lines: Markdown would end a raw HTML block at one.
    return new_open + "\n".join(line for line in lines if line).strip()
