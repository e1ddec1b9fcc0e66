"""The site's own scripts and style sheets as pages download them: no comments, no indentation.

Every page downloads them, and pages weigh close to their 600 KB budget
(tests/browser/test_page_weight.py). The sources keep their comments for whoever reads the
code; the copies written to the site after MkDocs copied them drop what a browser ignores.
Vendored assets (KaTeX) stay as sent. Compacting twice changes nothing, so a `serve --dirty`
rebuild writes what a full build writes.
"""

from __future__ import annotations

import re
from pathlib import Path

OWN = ("javascripts/*.js", "stylesheets/*.css")  # under the site directory
BLOCK = r"/\*(?:(?!\*/).)*\*/"  # one comment: never past its own end
CSS_COMMENT_RE = re.compile(rf"[ \t]*{BLOCK}", re.DOTALL)
# A script's comments on lines of their own only: `//` and `/*` may also sit inside a string.
JS_COMMENT_LINE_RE = re.compile(rf"^[ \t]*(?://[^\n]*|{BLOCK})[ \t]*$", re.DOTALL | re.MULTILINE)


def compact(text: str, *, script: bool) -> str:
    """`text` without comments (a script's: those on lines of their own), indentation and
    blank lines."""
    text = (JS_COMMENT_LINE_RE if script else CSS_COMMENT_RE).sub("", text)
    if script and any(line.count("`") % 2 for line in text.splitlines()):
        raise ValueError("a template literal spans lines: its indentation would be content")
    return "".join(line.strip() + "\n" for line in text.splitlines() if line.strip())


def write_compact(site_dir: str) -> None:
    """Rewrite the site's copies of its own scripts and style sheets in place."""
    for pattern in OWN:
        for path in sorted(Path(site_dir).glob(pattern)):
            text = path.read_text(encoding="utf-8")
            path.write_text(compact(text, script=path.suffix == ".js"), encoding="utf-8")
