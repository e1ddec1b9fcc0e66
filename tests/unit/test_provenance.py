"""Which commit a build describes: from git, from the environment, or a clear unknown."""

import os
import subprocess
from pathlib import Path

import pytest

from autograd_traced.build import provenance
from autograd_traced.build.provenance import COMMIT_VARIABLE, DATE_VARIABLE, Provenance

EPOCH = 1796237444  # 2026-12-02 18:50:44 UTC


def git(root: Path, *args: str) -> str:
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    dates = {"GIT_AUTHOR_DATE": f"@{EPOCH} +0000", "GIT_COMMITTER_DATE": f"@{EPOCH} +0000"}
    env = {**os.environ, **identity, "GIT_COMMITTER_EMAIL": "t@t", **dates}
    command = ["git", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / "page.md").write_text("# A page\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "page.md")
    git(tmp_path, "commit", "-q", "-m", "one")
    return tmp_path


def test_a_checkout_is_described_by_its_head(repository: Path) -> None:
    head = git(repository, "rev-parse", "HEAD").strip()
    found = provenance.read(repository, environ={})
    assert found == Provenance(head[:12], EPOCH)
    assert found.sentence() == f"Built from commit {head[:12]}, dated 2026-12-02."
    assert found.environment() == {COMMIT_VARIABLE: head[:12], DATE_VARIABLE: str(EPOCH)}


def test_uncommitted_changes_are_named(repository: Path) -> None:
    (repository / "page.md").write_text("# Edited\n")
    assert (provenance.read(repository, environ={}).commit or "").endswith("-dirty")


def test_a_copy_is_described_by_what_it_is_told(tmp_path: Path) -> None:
    told = {COMMIT_VARIABLE: "0123456789ab", DATE_VARIABLE: str(EPOCH)}
    assert provenance.read(tmp_path, environ=told) == Provenance("0123456789ab", EPOCH)


def test_a_folder_inside_another_repository_is_not_that_repository(repository: Path) -> None:
    (repository / "copy").mkdir()
    assert provenance.from_git(repository / "copy") is None


def test_outside_git_the_footer_says_so(tmp_path: Path) -> None:
    unknown = provenance.read(tmp_path, environ={})
    assert unknown == Provenance(None, None)
    assert unknown.sentence() == "Built outside git: the commit is unknown."
    assert unknown.environment() == {}
