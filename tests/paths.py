"""Where things live, for the tests."""

from pathlib import Path

from mkdocs.utils.yaml import yaml_load

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SNIPPETS = ROOT / "snippets"
PAGES = sorted(DOCS.rglob("*.md"))
LESSONS = [DOCS / "computation-graphs.md", DOCS / "computing-gradients.md", DOCS / "pitfalls.md"]
LAB = DOCS / "find-the-line.md"  # the debugging lab: broken programs to practise on
ARTICLES = [*LESSONS, LAB]
# The pages that offer their program as a script and a notebook, as mkdocs.yml lists them.
with (ROOT / "mkdocs.yml").open(encoding="utf-8") as _config:
    DOWNLOADABLE = [DOCS / page for page in yaml_load(_config)["extra"]["downloads"]]
