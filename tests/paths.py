"""Where things live, for the tests."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
PAGES = sorted(DOCS.rglob("*.md"))
ARTICLES = [DOCS / "computation-graphs.md", DOCS / "computing-gradients.md"]
