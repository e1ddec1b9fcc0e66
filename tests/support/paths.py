"""Where things live, for the tests."""

from pathlib import Path

from autograd_traced.plugin import configured

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
PAGES = sorted(DOCS.rglob("*.md"))
LESSONS = [DOCS / "computation-graphs.md", DOCS / "computing-gradients.md", DOCS / "pitfalls.md"]
LAB = DOCS / "find-the-line.md"  # the debugging lab: broken programs to practise on
ARTICLES = [*LESSONS, LAB]
# The pages that offer their program as a script and a notebook, as mkdocs.yml lists them.
DOWNLOADABLE = [DOCS / page for page in configured(ROOT / "mkdocs.yml").config.downloads]


def page_html(site: Path, page: Path) -> str:
    """The built HTML of the Markdown page `page` (a path under docs/) in `site`."""
    path = page.relative_to(DOCS).with_suffix("")
    name = path.parent / "index.html" if path.name == "index" else path / "index.html"
    return (site / name).read_text()


# Where each article defines its leaves: a search for "leaf" must find these sections.
LEAF_DEFINITIONS = [
    "computation-graphs/#the-script-line-by-line",
    "computing-gradients/#links-of-a-chain",
]
