"""A page that must run is rendered after the pages whose results are at hand, so its run
overlaps their Markdown; the site is written in its own order all the same."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

from autograd_traced.build.order import RenderOrder
from tests.support.build import build

RUNS = '```pycon exec="on" file="snippets/s.pycon"\n```\n'


def a_site(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "snippets").mkdir()
    (root / "snippets" / "s.pycon").write_text(">>> 1 + 1\n2\n")
    (root / "docs" / "a.md").write_text(f"# A\n\n{RUNS}")  # runs: first in the site's order
    (root / "docs" / "b.md").write_text("# B\n\nNothing to run.\n")
    (root / "docs" / "c.md").write_text("# C\n\nNothing to run.\n")
    (root / "mkdocs.yml").write_text(
        "site_name: t\nsite_url: https://example.org/\n"
        "theme: material\nnav: [a.md, b.md, c.md]\nplugins:\n  - search\n  - autograd-traced\n"
    )
    return root


def test_the_page_that_runs_is_rendered_last_and_written_in_its_place(tmp_path: Path) -> None:
    root = a_site(tmp_path / "repo")
    result = build(root, tmp_path / "site", verbose=True)
    assert result.ok, result.log
    read = re.findall(r"Reading: (\S+\.md)", result.log)
    assert read == ["b.md", "c.md", "a.md"], result.log
    sitemap = (tmp_path / "site" / "sitemap.xml").read_text()
    assert re.findall(r"<loc>https://example.org/(\w)/</loc>", sitemap) == ["a", "b", "c"]


def test_restore_puts_every_file_back_in_its_order() -> None:
    names = ("a.md", "x.css", "b.md", "c.md")
    files = Files([File(name, "/docs", "/site", use_directory_urls=True) for name in names])
    order = RenderOrder()
    order.runs_last(files, ["a.md", "b.md"])
    assert [file.src_uri for file in files.documentation_pages()] == ["c.md", "a.md", "b.md"]
    order.restore(files)
    assert [file.src_uri for file in files] == ["a.md", "x.css", "b.md", "c.md"]
