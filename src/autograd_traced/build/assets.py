"""The site's own stylesheets and scripts as readers download them: without their comments.

The sources say why each rule is there; a reader's browser has no use for it, and every page
loads every one of them (tests/browser/test_page_weight.py holds a page under 600 KB). The
built copies are stripped after MkDocs copied them; the sources keep every comment. Stripping
twice changes nothing, so a `serve --dirty` rebuild writes what a full build writes.
"""

from __future__ import annotations

import re
from pathlib import Path

OWN_FOLDERS = ("stylesheets", "javascripts")  # under docs/; vendored assets (KaTeX) stay as sent
BLOCK = r"/\*(?:(?!\*/).)*\*/"  # one comment: never past its own end
# A comment on a line of its own goes with its line; in CSS, one after a rule goes too.
CSS_COMMENT_RE = re.compile(rf"^[ \t]*{BLOCK}[ \t]*\n|[ \t]*{BLOCK}", re.DOTALL | re.MULTILINE)
# A script's comments on lines of their own only: `//` may also sit inside a string.
JS_COMMENT_LINE_RE = re.compile(rf"^[ \t]*(?://[^\n]*|{BLOCK})[ \t]*\n", re.DOTALL | re.MULTILINE)


def strip_comments(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    pattern = CSS_COMMENT_RE if path.suffix == ".css" else JS_COMMENT_LINE_RE
    path.write_text(pattern.sub("", text), encoding="utf-8")


def strip_own_assets(site_dir: Path) -> None:
    for folder in OWN_FOLDERS:
        for path in sorted((site_dir / folder).glob("*")):
            if path.suffix in (".css", ".js"):
                strip_comments(path)
