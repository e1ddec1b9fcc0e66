"""Where things live, for the tests."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
PAGES = sorted(DOCS.rglob("*.md"))
LESSONS = [DOCS / "computation-graphs.md", DOCS / "computing-gradients.md", DOCS / "pitfalls.md"]
LAB = DOCS / "find-the-line.md"  # the debugging lab: broken programs to practise on
ARTICLES = [*LESSONS, LAB]
