"""The site's own scripts and style sheets as pages download them: no comments, no indentation.

Every page downloads them, and pages weigh close to their 600 KB budget
(tests/browser/test_page_weight.py). The sources keep their comments for whoever reads the
code; the copies written to the site drop what a browser ignores. Neither file type holds a
string that spans lines (`compact` refuses one), so a line's indentation is never content.
"""

from __future__ import annotations

import re
from pathlib import Path

OWN = ("javascripts/*.js", "stylesheets/*.css")  # under docs/; vendored assets stay as they are
_BLOCK_COMMENT = re.compile(r"^\s*/\*.*?\*/[ \t]*$", re.DOTALL | re.MULTILINE)
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


def compact(text: str, *, script: bool) -> str:
    """`text` without whole-line comments, indentation and blank lines."""
    if text.count("`") % 2 or any(line.count("`") % 2 for line in text.splitlines()):
        raise ValueError("a template literal spans lines: its indentation would be content")
    text = _BLOCK_COMMENT.sub("", text)
    if script:
        text = _LINE_COMMENT.sub("", text)
    return "".join(line.strip() + "\n" for line in text.splitlines() if line.strip())


def write_compact(site_dir: str) -> None:
    """Rewrite the site's copies of its own scripts and style sheets in place."""
    for pattern in OWN:
        for path in sorted(Path(site_dir).glob(pattern)):
            text = path.read_text(encoding="utf-8")
            path.write_text(compact(text, script=path.suffix == ".js"), encoding="utf-8")
