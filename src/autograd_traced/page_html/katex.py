"""Render the page's math with KaTeX at build time, so readers download no math JavaScript.

pymdownx.arithmatex (generic mode) leaves `<span class="arithmatex">\\(...\\)</span>` and
`<div class="arithmatex">\\[...\\]</div>` in the HTML. One Node.js process, started once and
kept for the process's life (every page, every `mkdocs serve` rebuild), renders them with
the vendored KaTeX, and each formula is rendered once; only KaTeX's CSS and fonts reach
the browser.
"""

from __future__ import annotations

import atexit
import contextlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

MATH_RE = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.DOTALL)
DELIMITERS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}

# Reads one line of [[tex, display], ...] per request, answers one line of
# [{"html": ...} | {"error": ...}, ...].
_RENDERER = """
const katex = require(process.argv[1]);
const render = ([tex, displayMode]) => {
  try { return { html: katex.renderToString(tex, { displayMode, throwOnError: true }) }; }
  catch (error) { return { error: String(error.message) }; }
};
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  process.stdout.write(JSON.stringify(JSON.parse(line).map(render)) + "\\n");
});
"""


class MathError(Exception):
    """A formula KaTeX cannot render; the message quotes it."""


def render_math(page_html: str, katex_js: Path) -> str:
    matches = list(MATH_RE.finditer(page_html))
    if not matches:
        return page_html
    items = [[_tex(match), match.group("tag") == "div"] for match in matches]
    rendered = iter(_run_katex(items, katex_js))

    def replace(match: re.Match[str]) -> str:
        result = next(rendered)
        if "error" in result:
            raise MathError(f"KaTeX cannot render {_tex(match)!r}: {result['error']}")
        return f'<{match.group("tag")} class="arithmatex">{result["html"]}</{match.group("tag")}>'

    return MATH_RE.sub(replace, page_html)


def _tex(match: re.Match[str]) -> str:
    tex = html.unescape(match.group("tex")).strip()
    left, right = DELIMITERS[match.group("tag")]
    if tex.startswith(left) and tex.endswith(right):
        tex = tex[len(left) : -len(right)]
    return tex.strip()


def warm_up(katex_js: Path) -> None:
    """Start the renderer now, while a core is idle, rather than when the first page with
    math waits for it (Node.js and KaTeX take about 0.15 s to start). Should it not start,
    that page says why."""
    with contextlib.suppress(MathError, OSError):
        _renderer(katex_js)


def _renderer(katex_js: Path) -> _Renderer:
    """The process's renderer for `katex_js`, started on first use."""
    path = katex_js.resolve()
    if path not in _renderers:
        _renderers[path] = _Renderer.start(path)
    return _renderers[path]


def _run_katex(items: list[list[object]], katex_js: Path) -> list[dict[str, str]]:
    renderer = _renderer(katex_js)
    missing = [item for item in items if _key(item) not in renderer.done]
    if missing:
        for item, result in zip(missing, renderer.render(missing), strict=True):
            renderer.done[_key(item)] = result
    return [renderer.done[_key(item)] for item in items]


def _key(item: list[object]) -> tuple[str, bool]:
    return str(item[0]), bool(item[1])


class _Renderer:
    """The Node.js process that renders formulas, and what it rendered already."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.done: dict[tuple[str, bool], dict[str, str]] = {}

    @classmethod
    def start(cls, katex_js: Path) -> _Renderer:
        node = shutil.which("node")
        if node is None:
            raise MathError(
                "Node.js is needed to render math at build time: apt-get install nodejs"
            )
        process = subprocess.Popen(
            [node, "-e", _RENDERER, str(katex_js)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        atexit.register(process.kill)
        return cls(process)

    def render(self, items: list[list[object]]) -> list[dict[str, str]]:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(json.dumps(items) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            _renderers.clear()  # the next page starts a new one
            stderr = self.process.stderr.read() if self.process.stderr else ""
            raise MathError(f"KaTeX renderer failed:\n{stderr}")
        return json.loads(answer)


_renderers: dict[Path, _Renderer] = {}
