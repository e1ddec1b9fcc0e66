"""The harness itself: a broken snippet turns both the strict build and the tests red.

A copy of the site has one extra page per kind of break (tests/broken_copy.py). The real
`mkdocs build --strict` runs on it in the background (tests/conftest.py) and the snippet
tests run on it here, in a nested pytest session; each test checks that its break was
reported by both, naming the snippet, its line and the page. Nothing else may go red: every
failed test and every warning is accounted for, so the copy's untouched pages are the control.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograd_traced.snippets import snippet_paths
from tests.broken_copy import (
    LINKS_PAGE,
    MISSING,
    NO_LONGER_RAISES,
    PAGES,
    RAISES,
    WRONG_OUTPUT,
    BrokenSite,
)
from tests.build import Build, copy_site_sources

PHASE2 = "snippets/computing_gradients/phase2_backward.pycon"


@dataclass
class Outcomes:
    """A pytest plugin that records each test's outcome."""

    of: dict[str, str] = field(default_factory=dict)  # node id -> passed, failed or skipped

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":
            self.of.setdefault(report.nodeid, report.outcome)

    def pages(self, outcome: str) -> list[str]:
        return [node.split("::")[0] for node, got in self.of.items() if got == outcome]


@dataclass(frozen=True)
class PytestRun:
    exit_code: int
    output: str
    outcomes: Outcomes


def run_tests(root: Path, *args: str) -> PytestRun:
    """`pytest docs` in the copy at `root`, in this process (it has torch imported already)."""
    outcomes, output = Outcomes(), io.StringIO()
    with contextlib.redirect_stdout(output):
        exit_code = pytest.main([str(root / "docs"), "-q", "-rs", *args], plugins=[outcomes])
    return PytestRun(int(exit_code), output.getvalue(), outcomes)


@dataclass(frozen=True)
class Run:
    build: Build
    tests: PytestRun
    root: Path


@pytest.fixture(scope="module")
def broken(broken_site: BrokenSite) -> Run:
    tests = run_tests(broken_site.root)  # while the build goes on in the background
    return Run(broken_site.build.result(), tests, broken_site.root)


def assert_both_red(run: Run, *expected: str) -> None:
    assert not run.build.ok, "the strict build passed a broken snippet"
    assert run.tests.exit_code == pytest.ExitCode.TESTS_FAILED, run.tests.output
    for needle in expected:
        assert needle in run.build.log, f"build output lacks {needle!r}:\n{run.build.log}"
        assert needle in run.tests.output, f"test output lacks {needle!r}:\n{run.tests.output}"


def test_wrong_expected_output(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{WRONG_OUTPUT}:2 (used by docs/wrong-output.md): output differs",
        "-w1.grad = -0.0898   b.grad = -0.0818\n",
        "+w1.grad = -0.0898   b.grad = -0.0817\n",
    )


def test_unexpected_raise(broken: Run) -> None:
    assert_both_red(
        broken, f"{RAISES}:2 (used by docs/raises.md): unexpected exception", "ValueError: snippet"
    )
    assert f'File "{RAISES}", line 2' in broken.build.log


def test_expected_error_that_no_longer_happens(broken: Run) -> None:
    assert_both_red(
        broken, f"{NO_LONGER_RAISES}:6 (used by docs/no-longer-raises.md): expected an exception"
    )


def test_missing_snippet_file(broken: Run) -> None:
    assert_both_red(broken, f"docs/missing.md: snippet file '{MISSING}' does not")


def test_fence_with_a_rejected_option_fails_the_build(broken: Run) -> None:
    assert not broken.build.ok
    assert "docs/typo.md: this fence takes" in broken.build.log
    assert "sesion" in broken.build.log


def test_broken_internal_link_or_anchor_fails_the_build(broken: Run) -> None:
    assert "nowhere.md" in broken.build.log
    assert "no-anchor" in broken.build.log


def test_formula_katex_cannot_render_fails_the_build(broken: Run) -> None:
    assert f"{LINKS_PAGE}: KaTeX cannot render '\\\\frac{{1}}'" in broken.build.log


def test_later_snippets_of_a_broken_page_are_skipped_not_failed(broken: Run) -> None:
    assert f"needs the state of {WRONG_OUTPUT}, which failed" in broken.tests.output
    assert broken.tests.outcomes.pages("skipped") == ["docs/wrong-output.md"]


def test_only_the_breaks_fail(broken: Run) -> None:
    broken_pages = ["docs/missing.md", "docs/no-longer-raises.md", "docs/raises.md"]
    assert sorted(broken.tests.outcomes.pages("failed")) == [*broken_pages, "docs/wrong-output.md"]
    fences = sum(len(snippet_paths(p.read_text())) for p in (broken.root / "docs").glob("*.md"))
    assert len(broken.tests.outcomes.pages("passed")) == fences - 5
    warnings = [
        r
        for r in re.split(r"^(?=[A-Z]+ +- )", broken.build.log, flags=re.M)
        if r.startswith("WARNING")
    ]
    unexplained = [w for w in warnings if not any(page in w for page in [*PAGES, LINKS_PAGE])]
    assert len(warnings) >= len(PAGES) + 3, broken.build.log  # a page each, 3 on the links page
    assert not unexplained, unexplained


def test_printed_markup_is_shown_as_text_never_run(broken: Run) -> None:
    html = (broken.root / "site" / "markup" / "index.html").read_text()
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    assert "<script>alert(" not in html


def test_update_examples_rewrites_expected_output_in_place(tmp_path: Path) -> None:
    root = copy_site_sources(tmp_path / "repo")
    snippet = root / PHASE2
    original = snippet.read_text()
    snippet.write_text(original.replace("b.grad = -0.0817", "b.grad = -0.0818"))
    updated = run_tests(root, "--update-examples")
    assert updated.exit_code == pytest.ExitCode.OK, updated.output
    assert f"updated expected output: {PHASE2}" in updated.output
    assert snippet.read_text() == original
    assert run_tests(root).exit_code == pytest.ExitCode.OK
