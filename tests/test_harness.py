"""The harness itself: a broken snippet turns both the strict build and the tests red.

Each test copies the site sources, breaks one thing, and runs the real commands on the copy.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.build import build, copy_site_sources

SNIPPET = "snippets/computing_gradients/phase2_backward.pycon"
PAGE = "docs/computing-gradients.md"


@pytest.fixture
def site_copy(tmp_path: Path) -> Path:
    return copy_site_sources(tmp_path / "repo")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def run_sybil(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "docs", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def assert_both_red(root: Path, *expected: str) -> None:
    built = build(root, root / "site")
    assert built.returncode != 0, "the strict build passed a broken snippet"
    tested = run_sybil(root)
    assert tested.returncode == 1, tested.stdout
    for needle in expected:
        assert needle in built.stderr, f"build output lacks {needle!r}:\n{built.stderr}"
        assert needle in tested.stdout, f"test output lacks {needle!r}:\n{tested.stdout}"


def test_unbroken_copy_is_green(site_copy: Path) -> None:
    assert build(site_copy, site_copy / "site").returncode == 0
    tested = run_sybil(site_copy)
    assert tested.returncode == 0, tested.stdout
    assert re.search(r"\b(\d{2,}) passed\b", tested.stdout)


def test_wrong_expected_output(site_copy: Path) -> None:
    edit(site_copy / SNIPPET, "b.grad = -0.0817", "b.grad = -0.0818")
    assert_both_red(
        site_copy,
        f"{SNIPPET}:2 (used by {PAGE}): output differs",
        "+w1.grad = -0.0898   b.grad = -0.0817",
    )


def test_unexpected_raise(site_copy: Path) -> None:
    edit(site_copy / SNIPPET, ">>> print(", ">>> raise ValueError('snippet broke')\n>>> print(")
    assert_both_red(
        site_copy,
        f"{SNIPPET}:2 (used by {PAGE}): unexpected exception",
        "ValueError: snippet broke",
    )


def test_expected_error_that_no_longer_happens(site_copy: Path) -> None:
    snippet = "snippets/computation_graphs/second_call_fails.pycon"
    edit(site_copy / snippet, "grad(loss, b)  #", "grad(loss, b, retain_graph=True)  #")
    assert_both_red(site_copy, f"{snippet}:4 (used by docs/computation-graphs.md): expected an")


def test_fence_with_a_rejected_option_fails_the_build(site_copy: Path) -> None:
    fence = f'```pycon exec="on" file="{SNIPPET}"'
    edit(site_copy / PAGE, fence, f'{fence} sesion="typo"')
    built = build(site_copy, site_copy / "site")
    assert built.returncode != 0
    assert "sesion" in built.stderr


def test_missing_snippet_file_fails_build_and_tests(site_copy: Path) -> None:
    (site_copy / SNIPPET).unlink()
    assert_both_red(site_copy, f"{PAGE}: snippet file '{SNIPPET}' does not exist")


def test_update_examples_rewrites_expected_output_in_place(site_copy: Path) -> None:
    original = (site_copy / SNIPPET).read_text()
    edit(site_copy / SNIPPET, "b.grad = -0.0817", "b.grad = -0.0818")
    updated = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "docs",
            "-q",
            "-p",
            "no:cacheprovider",
            "--update-examples",
        ],
        cwd=site_copy,
        capture_output=True,
        text=True,
        check=False,
    )
    assert updated.returncode == 0, updated.stdout
    assert f"updated expected output: {SNIPPET}" in updated.stdout
    assert (site_copy / SNIPPET).read_text() == original
    assert run_sybil(site_copy).returncode == 0


def test_broken_internal_link_or_anchor_fails_the_build(site_copy: Path) -> None:
    page = site_copy / "docs" / "index.md"
    page.write_text(page.read_text() + "\nSee [the missing page](nowhere.md).\n")
    built = build(site_copy, site_copy / "site")
    assert built.returncode != 0
    assert "nowhere.md" in built.stderr

    page.write_text(page.read_text().replace("nowhere.md", "computing-gradients.md#no-such-anchor"))
    built = build(site_copy, site_copy / "site")
    assert built.returncode != 0
    assert "no-such-anchor" in built.stderr


def test_printed_markup_is_shown_as_text_never_run(site_copy: Path) -> None:
    edit(
        site_copy / SNIPPET,
        ">>> print(",
        """>>> print("<script>alert('x')</script>")\n<script>alert('x')</script>\n>>> print(""",
    )
    built = build(site_copy, site_copy / "site")
    assert built.returncode == 0, built.stderr
    html = (site_copy / "site" / "computing-gradients" / "index.html").read_text()
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    assert "<script>alert(" not in html
