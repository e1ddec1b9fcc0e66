"""Render Graphviz DOT to an SVG element that can be inlined in a page, in either palette.

No XML prolog or comments (they carry the Graphviz version, which would make builds differ),
no fixed size, no white background, colours from ``currentColor`` and CSS classes (styled by
``docs/stylesheets/diagrams.css``), prefixed ids and an accessible name. Kept apart from
``graph`` so that hand-made diagrams render without importing torch.
"""

from __future__ import annotations

import html
import math
import re
import shutil
import subprocess
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
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


DOT_TIMEOUT = 60.0  # seconds Graphviz may take, as an example may (the plugin's default)

# dot is killed with the thread that started it, even by a SIGKILL of the build, which skips
# the time limit's own kill. util-linux's setpriv asks for the signal and then runs dot: no
# Python between fork and exec (a preexec_fn is unsafe in the build, which has threads).
_SETPRIV = shutil.which("setpriv")
_DIES_WITH_PARENT = [_SETPRIV, "--pdeathsig", "KILL", "--"] if _SETPRIV else []


class _Drawings:
    """Graphviz's SVG by DOT source and time limit, the latest `size` kept. Drawn once even
    when several pages ask at the same time (a build's pages run in parallel, and ask for the
    same graphs): the others wait for the first drawing instead of starting Graphviz again. A
    drawing that failed is not kept: the next ask tries again."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._done: OrderedDict[tuple[str, float], str] = OrderedDict()
        self._drawing: dict[tuple[str, float], Future[str]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple[str, float], draw: Callable[[], str]) -> str:
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                return self._done[key]
            drawing = self._drawing.get(key)
            if drawing is None:
                drawing = self._drawing[key] = Future()
                drawing.set_running_or_notify_cancel()
                ours = True
            else:
                ours = False
        if not ours:
            return drawing.result()
        try:
            svg = draw()
        except BaseException as error:
            drawing.set_exception(error)
            raise
        else:
            drawing.set_result(svg)
            with self._lock:
                self._done[key] = svg
                while len(self._done) > self._size:
                    self._done.popitem(last=False)
            return svg
        finally:
            with self._lock:
                del self._drawing[key]


_DRAWINGS = _Drawings(size=1024)


def dot_svg(dot_source: str, timeout: float = DOT_TIMEOUT) -> str:
    """Graphviz's SVG of a DOT source, drawn once per source in this process; a drawing
    that takes longer than `timeout` is stopped (a dense graph can take minutes)."""
    return _DRAWINGS.get((dot_source, timeout), lambda: _run_dot(dot_source, timeout))


def _run_dot(dot_source: str, timeout: float) -> str:
    try:
        result = subprocess.run(
            [*_DIES_WITH_PARENT, *_dot_command(), "-Tsvg"],
            input=dot_source,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"dot timed out after {timeout:g} s") from None
    if result.returncode != 0:
        raise RuntimeError(f"dot failed (exit {result.returncode}):\n{result.stderr}")
    return result.stdout


Draw = Callable[[str], str]  # DOT source -> Graphviz's SVG


def render_svg(dot_source: str, *, alt: str, draw: Draw = dot_svg) -> str:
    """Render DOT to an SVG element ready to inline in HTML, themed by CSS classes.

    `alt` is the accessible name (aria-label) and nothing else: no <title> repeats it, so
    screen readers read it once. The per-node <title> elements Graphviz writes (tooltips like
    "n3") are dropped too, and no ids are left (see `compact`). `draw` runs Graphviz: a
    page's own process asks the build's process instead, which keeps every drawing for the
    pages (and rebuilds) after it (see running.child).
    """
    svg = inert(draw(dot_source))
    svg = re.sub(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", "", svg, flags=re.DOTALL)
    svg = re.sub(r"<title>.*?</title>", "", svg, flags=re.DOTALL)
    svg = svg.replace("&#45;", "-")  # Graphviz escapes every hyphen, even inside class names
    svg = _BACKGROUND.sub("", svg)  # the page's own background should show through
    svg = re.sub(r'(fill|stroke)="(?:black|#000000)"', r'\1="currentColor"', svg)
    svg = re.sub(r"<text\b[^>]*>", _style_text, svg)
    # Layout was measured with DejaVu; a reader without it should still get a similar face.
    svg = re.sub(r'font-family="([^",]+)"', _font_stack, svg)

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
        '<svg xmlns="http://www.w3.org/2000/svg"'
        f' class="ag-diagram" viewBox="{view_box.group(1)}"'
        f' style="width: {natural}px; max-width: 100%; height: auto"'
        f' role="img" aria-label="{html.escape(alt)}">'
    )
    body = compact(svg[open_tag.end() :])
    lines = [line.rstrip() for line in body.splitlines()]
    # No blank lines: Markdown would end a raw HTML block at one.
    return compact(new_open) + "\n".join(line for line in lines if line).strip()


# What can run or lead elsewhere in an SVG: scripts, embedded HTML, links, references.
_ACTIVE_ELEMENTS = re.compile(
    r"<(script|foreignObject|iframe|object|embed|image|use|animate\w*|set)\b.*?"
    r"(?:/>|</\1\s*>)",
    flags=re.DOTALL | re.IGNORECASE,
)
_LINK_TAGS = re.compile(r"</?a\b[^>]*>", flags=re.IGNORECASE)
_ACTIVE_ATTRIBUTES = re.compile(
    r"""\s(?:on\w+|(?:xlink:)?href|src|formaction)\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)""",
    flags=re.IGNORECASE,
)


def inert(svg: str) -> str:
    """`svg` with nothing that can run or lead elsewhere: every drawing the build inlines
    (recorded graphs, whose labels hold a snippet's values, and hand-made diagrams) passes
    here. Links are unwrapped, their text kept."""
    svg = _ACTIVE_ELEMENTS.sub("", svg)
    svg = _LINK_TAGS.sub("", svg)
    return _ACTIVE_ATTRIBUTES.sub("", svg)


LEGIBLE_PX = 11  # the smallest text a phone reader can still read (body text is 16)


def figure(svg: str) -> str:
    """A drawing as the page shows it. It shrinks to fit its column, but never below the
    width at which its smallest text is LEGIBLE_PX (diagrams.css reads it): on a phone, a
    wide diagram scrolls sideways inside its figure instead of shrinking its text to 7 px."""
    legible = legible_width(svg)
    style = f' style="--ag-legible-width: {legible}px"' if legible else ""
    return f'<figure class="autograd-diagram"{style}>\n{svg}\n</figure>'


def legible_width(svg: str) -> int | None:
    """The width in CSS px at which the drawing's smallest text is LEGIBLE_PX, at most its
    natural width; None for a drawing without text."""
    view_box = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"', svg)
    natural = re.search(r"width: (\d+)px", svg)
    sizes = [float(size) for size in re.findall(r'font-size="([\d.]+)"', svg)]
    if view_box is None or natural is None or not sizes:
        return None
    return min(math.ceil(float(view_box[1]) * LEGIBLE_PX / min(sizes)), int(natural[1]))


def compact(svg: str) -> str:
    """Drop what the page does not need, for page weight (diagrams are most of a page).

    Ids go (nothing refers to them, and several diagrams share a page), the default font, the
    text colour, the strokes' colour and the shapes' default fills (none; an arrowhead's is
    the text colour) come from diagrams.css, `start` is SVG's default anchor, coordinates are
    whole points (under a CSS pixel at any size drawn here) and straight lines are lines.
    """
    svg = re.sub(r'\sid="[^"]*"', "", svg)
    svg = re.sub(
        rf' (?:font-family="{FONT}, sans-serif"|text-anchor="start"|stroke="currentColor")', "", svg
    )
    svg = re.sub(r'(<text\b[^>]*) fill="currentColor"', r"\1", svg)
    svg = re.sub(r'(<(?:path|ellipse)\b[^>]*) fill="none"', r"\1", svg)
    svg = re.sub(r'(<polygon\b[^>]*) fill="currentColor"', r"\1", svg)
    svg = _GEOMETRY.sub(
        lambda attr: attr.group(1) + _NUMBER.sub(lambda n: str(round(float(n[0]))), attr.group(2)),
        svg,
    )
    return _CURVES.sub(_straighten, svg)


def _straighten(path: re.Match[str]) -> str:
    """Graphviz draws every line as a cubic curve: one whose control points are its own ends
    is a straight line, drawn by `H`, `V` or `L` (a box's sides, most edges) in a fraction of
    the characters."""
    points = path["curves"].split()
    if len(points) % 3:
        return path[0]
    at, drawn = path["start"], [f"M{path['start']}"]
    for first, second, end in zip(points[::3], points[1::3], points[2::3], strict=True):
        if (first, second) != (at, end):
            drawn.append(f"C{first} {second} {end}")
        else:
            (x0, y0), (x, y) = at.split(","), end.split(",")
            drawn.append(f"H{x}" if y == y0 else f"V{y}" if x == x0 else f"L{end}")
        at = end
    return f' d="{"".join(drawn)}"'


# Attributes that hold coordinates and sizes, and the numbers in them (never a label's text).
_GEOMETRY = re.compile(r'(\s(?:d|points|x|y|cx|cy|rx|ry|transform|viewBox|font-size)=")([^"]*)')
_NUMBER = re.compile(r"-?\d+\.\d+")
# A path of one move and cubic curves, its coordinates whole numbers (after rounding).
_CURVES = re.compile(r' d="M(?P<start>-?\d+,-?\d+)C(?P<curves>(?:\s?-?\d+,-?\d+)+)"')
FONT = "DejaVu Sans"  # the face Graphviz measured every layout with
