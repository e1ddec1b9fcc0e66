"""Where things live, for the tests."""

from pathlib import Path

from autograd_traced.plugin import configured
from autograd_traced.tools import local_site

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
PAGES = sorted(DOCS.rglob("*.md"))
LESSONS = [DOCS / "computation-graphs.md", DOCS / "computing-gradients.md", DOCS / "pitfalls.md"]
LAB = DOCS / "find-the-line.md"  # the debugging lab: broken programs to practise on
MIN_LAB_EXERCISES = 12
ARTICLES = [*LESSONS, LAB]
# The pages that offer their program as a script and a notebook, as mkdocs.yml lists them.
DOWNLOADABLE = [DOCS / page for page in configured(ROOT / "mkdocs.yml").config.downloads]


def url_path(page: Path) -> str:
    """docs/a/b.md -> "a/b/", docs/index.md -> "" (MkDocs directory URLs)."""
    return local_site.url_path(page.relative_to(DOCS).as_posix())


def slug(path: str) -> str:
    """A page's URL path as a name for a test id or a screenshot: "a/b/" -> "a-b"."""
    return path.strip("/").replace("/", "-") or "home"


# Every page's URL path, from the Markdown sources (the browser tests check that this is exactly
# the set of content pages in the built site).
PAGE_URLS = sorted(url_path(page) for page in PAGES)


def page_html(site: Path, page: Path) -> str:
    """The built HTML of the Markdown page `page` (a path under docs/) in `site`."""
    return (site / url_path(page) / "index.html").read_text()


# Where each article defines its leaves: a search for "leaf" must find these sections.
LEAF_DEFINITIONS = [
    "computation-graphs/#the-script-line-by-line",
    "computing-gradients/#links-of-a-chain",
]
