"""Which commit a build was made from, and its date: for the footer, and for MkDocs' dates.

In a git checkout both come from HEAD. A copy of the sources outside git (the tests build
one) is told them by COMMIT_VARIABLE and SOURCE_DATE_EPOCH, which `environment()` gives.
The date is the commit's, never the build's, so two builds of one commit on different days
are identical: MkDocs dates the sitemap and its gzip header from SOURCE_DATE_EPOCH.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

COMMIT_VARIABLE = "AUTOGRAD_TRACED_COMMIT"
DATE_VARIABLE = "SOURCE_DATE_EPOCH"  # https://reproducible-builds.org/specs/source-date-epoch/
HASH_LENGTH = 12


@dataclass(frozen=True)
class Provenance:
    commit: str | None  # abbreviated hash; "-dirty" after it for uncommitted changes
    epoch: int | None  # the commit's time, in seconds since the epoch

    @property
    def date(self) -> str | None:
        """The commit's day, in UTC: what MkDocs writes as the sitemap's lastmod."""
        if self.epoch is None:
            return None
        return datetime.fromtimestamp(self.epoch, UTC).strftime("%Y-%m-%d")

    def sentence(self) -> str:
        """The footer's words for it."""
        if self.commit is None:
            return "Built outside git: the commit is unknown."
        if self.date is None:
            return f"Built from commit {self.commit}, of an unknown date."
        return f"Built from commit {self.commit}, dated {self.date}."

    def environment(self) -> dict[str, str]:
        """The variables that make a build of a copy of these sources describe this commit."""
        variables = {}
        if self.commit is not None:
            variables[COMMIT_VARIABLE] = self.commit
        if self.epoch is not None:
            variables[DATE_VARIABLE] = str(self.epoch)
        return variables

    def pin_build_date(self) -> None:
        """Make MkDocs date this build by the commit (it reads SOURCE_DATE_EPOCH)."""
        if self.epoch is not None:
            os.environ[DATE_VARIABLE] = str(self.epoch)


def read(root: Path, environ: Mapping[str, str] = os.environ) -> Provenance:
    """The provenance of the sources at `root`: as told by the environment, else from git."""
    epoch = environ.get(DATE_VARIABLE)
    told = Provenance(environ.get(COMMIT_VARIABLE), int(epoch) if epoch else None)
    if told.commit is not None:
        return told
    return from_git(root) or told


def from_git(root: Path) -> Provenance | None:
    """HEAD of the repository whose top level is `root`; None outside one (or without git)."""
    try:
        top, commit = _git(root, "rev-parse", "--show-toplevel", "HEAD").splitlines()
        epoch = int(_git(root, "show", "--no-patch", "--format=%ct", "HEAD"))
        changed = _git(root, "status", "--porcelain").strip()
    except (OSError, subprocess.CalledProcessError, ValueError):
        return None
    if Path(top).resolve() != root.resolve():  # a copy inside some other repository
        return None
    return Provenance(commit[:HASH_LENGTH] + ("-dirty" if changed else ""), epoch)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout
