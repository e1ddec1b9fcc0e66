"""`mkdocs serve --dirty` writes only the pages whose inputs changed, and what it serves is
byte for byte what a build of the same sources without any reuse writes
(autograd_traced.build.incremental). Each test builds a copy of the site as serve does, in this
process: a first build, an edit, a rebuild."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograd_traced.plugin import configured
from tests.support.build import Build, copy_site_sources, serve_build
from tests.support.paths import ROOT

PAGES = (
    "index.html",
    *(
        f"{name}/index.html"
        for name in ("computation-graphs", "computing-gradients", "pitfalls", "find-the-line")
    ),
)


class DirtyServe:
    """A copy of the site, served with `--dirty` into `site/`."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.root = copy_site_sources(workdir / "repo")
        self.site = workdir / "site"
        self.first = serve_build(self.root, self.site, dirty=True, first=True)
        assert self.first.ok, self.first.log
        self.times = self.page_times()

    def rebuild(self) -> Build:
        self.times = self.page_times()
        return serve_build(self.root, self.site, dirty=True, first=False)

    def edit(self, path: str, old: str, new: str) -> None:
        source = self.root / path
        text = source.read_text(encoding="utf-8")
        assert old in text, f"{path} no longer holds {old!r}: update the test"
        source.write_text(text.replace(old, new, 1), encoding="utf-8")

    def page_times(self) -> dict[str, int]:
        return {page: (self.site / page).stat().st_mtime_ns for page in PAGES}

    def rewritten(self) -> set[str]:
        """The pages whose HTML the last rebuild wrote."""
        now = self.page_times()
        return {page for page in PAGES if now[page] != self.times[page]}

    def full_build(self) -> Path:
        """A serve build of the same sources that reuses nothing: no page skipped, every page
        run afresh. (The dirty serve's own state is kept for its next rebuild.)"""
        site = self.workdir / f"full-{len(list(self.workdir.glob('full-*')))}"
        plugin = configured(self.root / "mkdocs.yml")  # the one instance serve keeps
        dirty, plugin.dirty = plugin.dirty, None
        plugin.runner.forget_except(())
        try:
            result = serve_build(self.root, site, dirty=False, first=False)
        finally:
            plugin.dirty = dirty
        assert result.ok, result.log
        return site


@pytest.fixture
def served(tmp_path: Path) -> Iterator[DirtyServe]:
    try:
        yield DirtyServe(tmp_path)
    finally:  # what `mkdocs serve` set for the plugin must not reach the next test
        configured(ROOT / "mkdocs.yml").on_startup(command="build", dirty=False)


def assert_same_site(served_dir: Path, full_dir: Path) -> None:
    def tree(root: Path) -> dict[str, bytes]:
        return {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file()
        }

    served_files, full_files = tree(served_dir), tree(full_dir)
    assert sorted(served_files) == sorted(full_files)
    differ = [name for name in served_files if served_files[name] != full_files[name]]
    assert not differ, f"served differently from a build without reuse: {differ}"


def written_count(result: Build) -> str:
    lines = [line for line in result.log.splitlines() if "Writing " in line and " pages" in line]
    assert len(lines) == 1, result.log
    return lines[0].split("Writing ", 1)[1].split(" pages", 1)[0]


def test_the_first_build_writes_every_page_and_no_rebuild_writes_an_unchanged_one(
    served: DirtyServe,
) -> None:
    assert written_count(served.first) == f"{len(PAGES)} of {len(PAGES)}"
    again = served.rebuild()
    assert again.ok, again.log
    assert written_count(again) == f"0 of {len(PAGES)}"
    assert served.rewritten() == set()
    assert "dirty" not in again.log  # MkDocs' warning that would abort strict serve is dropped
    assert_same_site(served.site, served.full_build())


def test_saving_a_snippet_writes_the_page_that_runs_it_and_only_that_page(
    served: DirtyServe,
) -> None:
    served.edit("snippets/pitfalls/backward_then_grad.pycon", "clear what", "first clear what")
    result = served.rebuild()
    assert result.ok, result.log
    assert written_count(result) == f"1 of {len(PAGES)}"
    assert served.rewritten() == {"pitfalls/index.html"}
    assert "first clear what" in (served.site / "pitfalls/index.html").read_text()
    # Search index included: it holds every page's entries once, the edited page's new ones.
    assert_same_site(served.site, served.full_build())


def test_a_snippet_that_several_pages_run_writes_each_of_them(served: DirtyServe) -> None:
    served.edit("snippets/program/setup.pycon", "# bias: tracked", "# the bias: tracked")
    result = served.rebuild()
    assert result.ok, result.log
    assert served.rewritten() == {
        "index.html",
        "computation-graphs/index.html",
        "computing-gradients/index.html",
        "pitfalls/index.html",
    }
    assert_same_site(served.site, served.full_build())


def test_a_change_to_the_navigation_writes_every_page(served: DirtyServe) -> None:
    served.edit("mkdocs.yml", "'Pitfalls, Run for Real'", "'Pitfalls, Run'")
    result = served.rebuild()
    assert result.ok, result.log
    assert served.rewritten() == set(PAGES)
    assert_same_site(served.site, served.full_build())


def test_a_link_on_a_page_not_written_again_is_still_checked(served: DirtyServe) -> None:
    # pitfalls.md links to this heading's anchor; only computing-gradients.md changes.
    served.edit("docs/computing-gradients.md", "## Phase 1: `grad`, once", "## Phase 1: `grad`")
    result = served.rebuild()
    assert not result.ok  # strict: the warning aborts the rebuild, as a full build's would
    assert "pitfalls.md" in result.log and "phase-1-grad-once-for-b" in result.log, result.log


def test_a_failed_page_is_written_and_reported_on_every_rebuild(served: DirtyServe) -> None:
    # The second request now succeeds: the snippet's stored traceback no longer matches.
    served.edit(
        "snippets/pitfalls/backward_then_grad.pycon",
        "loss.backward()  # retain_graph left at its default",
        "loss.backward(retain_graph=True)  # retain_graph",
    )
    for _ in range(2):  # a failure stays on the page and in the terminal until it is fixed
        result = served.rebuild()
        assert written_count(result) == f"1 of {len(PAGES)}"
        assert "snippets/pitfalls/backward_then_grad.pycon:4" in result.log, result.log
        assert "autograd-failure" in (served.site / "pitfalls/index.html").read_text()
        assert served.rewritten() == {"pitfalls/index.html"}


def test_a_formula_the_search_index_cannot_read_is_reported_to_the_writer(
    served: DirtyServe,
) -> None:
    # KaTeX draws \nabla; the search index's reading of TeX as text does not know it.
    served.edit("docs/computation-graphs.md", r"simply $L = -\log a$", r"simply $\nabla L$")
    result = served.rebuild()
    assert "search index:" in result.log and r"\nabla" in result.log, result.log
    assert "shown on the page" not in result.log  # no page shows it


def test_a_title_the_navigation_takes_from_a_page_writes_every_page(served: DirtyServe) -> None:
    served.edit("mkdocs.yml", "- 'Pitfalls, Run for Real': pitfalls.md", "- pitfalls.md")
    assert served.rebuild().ok
    # Every page's navigation now shows pitfalls.md's own title: editing it edits them all.
    served.edit("docs/pitfalls.md", "# Pitfalls, Run for Real", "# Pitfalls, Run")
    result = served.rebuild()
    assert result.ok, result.log
    assert served.rewritten() == set(PAGES)
    assert re.search(r">\s*Pitfalls, Run\s*<", (served.site / "index.html").read_text())
    assert_same_site(served.site, served.full_build())
