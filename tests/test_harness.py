"""The harness itself: a broken snippet turns both the strict build and the tests red.

One copy of the site sources takes every breaking change at once, placed so that no break
hides another (a failed snippet stops the rest of its page); the real commands run on it once,
and each test checks that its break was reported, naming the snippet, its line and the page.
"""

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograd_traced.snippets import snippet_paths
from tests.build import build, copy_site_sources

WRONG_OUTPUT = "snippets/computing_gradients/phase2_backward.pycon"
NO_LONGER_RAISES = "snippets/computation_graphs/second_call_fails.pycon"
RAISES = "snippets/computation_graphs/nothing_saved.pycon"


@dataclass(frozen=True)
class Run:
    build: subprocess.CompletedProcess[str]
    tests: subprocess.CompletedProcess[str]
    root: Path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def add_page(root: Path, name: str, fences: list[str]) -> None:
    body = "\n\n".join(f'```pycon exec="on" {options}\n```' for options in fences)
    (root / "docs" / name).write_text(f"# {name}\n\n{body}\n")


def run_sybil(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "docs", "-q", "-p", "no:cacheprovider", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def run_both(root: Path) -> Run:
    return Run(build(root, root / "site"), run_sybil(root, "-rs"), root)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = copy_site_sources(tmp_path_factory.mktemp("broken") / "repo")
    edit(root / WRONG_OUTPUT, "b.grad = -0.0817", "b.grad = -0.0818")
    edit(root / NO_LONGER_RAISES, "grad(loss, b)  #", "grad(loss, b, retain_graph=True)  #")
    edit(
        root / RAISES, ">>> grad(s, b)\n", ">>> raise ValueError('snippet broke')\n>>> grad(s, b)\n"
    )
    # Pages of their own, so that these breaks run whatever the article pages do.
    setup = 'file="snippets/program/setup.pycon"'
    add_page(root, "raises.md", [setup, f'file="{RAISES}"'])
    add_page(root, "missing.md", ['file="snippets/program/nope.pycon"'])
    add_page(root, "typo.md", [f'{setup} sesion="typo"'])
    index = root / "docs" / "index.md"
    index.write_text(
        index.read_text()
        + "\n[gone](nowhere.md), [no anchor](computing-gradients.md#no-anchor), $\\frac{1}$\n"
    )
    return run_both(root)


def assert_both_red(run: Run, *expected: str) -> None:
    assert run.build.returncode != 0, "the strict build passed a broken snippet"
    assert run.tests.returncode == 1, run.tests.stdout
    for needle in expected:
        assert needle in run.build.stderr, f"build output lacks {needle!r}:\n{run.build.stderr}"
        assert needle in run.tests.stdout, f"test output lacks {needle!r}:\n{run.tests.stdout}"


def test_wrong_expected_output(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{WRONG_OUTPUT}:2 (used by docs/computing-gradients.md): output differs",
        "+w1.grad = -0.0898   b.grad = -0.0817",
    )


def test_unexpected_raise(broken: Run) -> None:
    assert_both_red(
        broken, f"{RAISES}:2 (used by docs/raises.md): unexpected exception", "ValueError: snippet"
    )
    assert f'File "{RAISES}", line 2' in broken.build.stderr


def test_expected_error_that_no_longer_happens(broken: Run) -> None:
    assert_both_red(
        broken, f"{NO_LONGER_RAISES}:4 (used by docs/computation-graphs.md): expected an exception"
    )


def test_missing_snippet_file(broken: Run) -> None:
    assert_both_red(broken, "docs/missing.md: snippet file 'snippets/program/nope.pycon' does not")


def test_fence_with_a_rejected_option_fails_the_build(broken: Run) -> None:
    assert broken.build.returncode != 0
    assert "docs/typo.md: this fence takes" in broken.build.stderr
    assert "sesion" in broken.build.stderr


def test_broken_internal_link_or_anchor_fails_the_build(broken: Run) -> None:
    assert "nowhere.md" in broken.build.stderr
    assert "no-anchor" in broken.build.stderr


def test_formula_katex_cannot_render_fails_the_build(broken: Run) -> None:
    assert "index.md: KaTeX cannot render '\\\\frac{1}'" in broken.build.stderr


def test_later_snippets_of_a_broken_page_are_skipped_not_failed(broken: Run) -> None:
    assert f"needs the state of {WRONG_OUTPUT}, which failed" in broken.tests.stdout


@pytest.fixture(scope="module")
def escaped(tmp_path_factory: pytest.TempPathFactory) -> Run:
    # Not a break: a snippet may print markup, which the page must show as text.
    root = copy_site_sources(tmp_path_factory.mktemp("escaped") / "repo")
    markup = "<script>alert('x')</script>"
    edit(root / WRONG_OUTPUT, ">>> print(", f'>>> print("{markup}")\n{markup}\n>>> print(')
    return run_both(root)


def test_unbroken_copy_is_green(escaped: Run) -> None:
    assert escaped.build.returncode == 0, escaped.build.stderr
    assert escaped.tests.returncode == 0, escaped.tests.stdout
    fences = sum(len(snippet_paths(p.read_text())) for p in (escaped.root / "docs").glob("*.md"))
    assert f"{fences} passed" in escaped.tests.stdout


def test_printed_markup_is_shown_as_text_never_run(escaped: Run) -> None:
    html = (escaped.root / "site" / "computing-gradients" / "index.html").read_text()
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    assert "<script>alert(" not in html


def test_update_examples_rewrites_expected_output_in_place(tmp_path: Path) -> None:
    root = copy_site_sources(tmp_path / "repo")
    original = (root / WRONG_OUTPUT).read_text()
    edit(root / WRONG_OUTPUT, "b.grad = -0.0817", "b.grad = -0.0818")
    updated = run_sybil(root, "--update-examples")
    assert updated.returncode == 0, updated.stdout
    assert f"updated expected output: {WRONG_OUTPUT}" in updated.stdout
    assert (root / WRONG_OUTPUT).read_text() == original
    assert run_sybil(root).returncode == 0
