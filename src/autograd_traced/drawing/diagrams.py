"""Hand-made diagrams: Graphviz sources in docs/diagrams/, rendered like the generated graphs.

Each ``.dot`` file starts with one comment line that gives its alt text::

    // alt: What a reader who cannot see the picture needs to know.

``diagram_svg`` renders the file's text with ``svg.render_svg``, so it gets the same clean-up and
CSS classes as the autograd graphs: give nodes and edges a ``class`` from
docs/stylesheets/diagrams.css (``ag-step``, ``ag-ok``, ``ag-error``, ...) rather than colours, and
use the marker colours of ``svg.TEXT_CLASSES`` for text that needs a class of its own.
"""

from __future__ import annotations

import functools
import re

from autograd_traced.drawing.svg import DOT_TIMEOUT, dot_svg, render_svg

_ALT_LINE = re.compile(r"//\s*alt:(.*)")


def diagram_alt(source: str) -> str | None:
    """The alt text from a `// alt: ...` first line, if there is one."""
    match = _ALT_LINE.fullmatch(source.lstrip().partition("\n")[0].strip())
    return (match.group(1).strip() or None) if match else None


@functools.lru_cache(maxsize=256)
def diagram_svg(source: str, timeout: float = DOT_TIMEOUT) -> str:
    """A .dot file's text as inline SVG, drawn once per content: pages and rebuilds share it;
    Graphviz may take `timeout` seconds."""
    alt = diagram_alt(source)
    if not alt:
        raise ValueError("no alt text: begin the file with '// alt: ...'")
    return render_svg(source, alt=alt, draw=lambda dot: dot_svg(dot, timeout))
