"""Render the page's math with KaTeX at build time, so readers download no math JavaScript.

pymdownx.arithmatex (generic mode) leaves `<span class="arithmatex">\\(...\\)</span>` and
`<div class="arithmatex">\\[...\\]</div>` in the HTML. One Node.js process per page renders
them all with the vendored KaTeX; only its CSS and fonts reach the browser.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

MATH_RE = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.DOTALL)
DELIMITERS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}

# Reads [[tex, display], ...] on stdin, writes [{"html": ...} | {"error": ...}, ...].
_RENDERER = """
const katex = require(process.argv[1]);
const items = JSON.parse(require("fs").readFileSync(0, "utf8"));
const render = ([tex, displayMode]) => {
  try { return { html: katex.renderToString(tex, { displayMode, throwOnError: true }) }; }
  catch (error) { return { error: String(error.message) }; }
};
process.stdout.write(JSON.stringify(items.map(render)));
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


def _run_katex(items: list[list[object]], katex_js: Path) -> list[dict[str, str]]:
    node = shutil.which("node")
    if node is None:
        raise MathError("Node.js is needed to render math at build time: apt-get install nodejs")
    result = subprocess.run(
        [node, "-e", _RENDERER, str(katex_js.resolve())],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise MathError(f"KaTeX renderer failed:\n{result.stderr}")
    return json.loads(result.stdout)
