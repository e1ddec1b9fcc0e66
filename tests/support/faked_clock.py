"""The real site built again by the real command, with the clock faked years ahead.

Debian's faketime fakes the date for the whole build process, so if anything in the output
came from the build's clock instead of the commit, it would differ from the session's build.
Started in the background from the session's start (tests/conftest.py), like the harness's.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.support.build import CommandBuild
from tests.support.paths import ROOT

FAKETIME = "faketime"  # Debian's package of the same name
FAKED_CLOCK = "2031-01-01 00:00:00"  # years after any commit of this site


@dataclass(frozen=True)
class FakedClockBuild:
    workdir: Path  # removed at the end of the session
    build: CommandBuild  # `faketime ... mkdocs build --strict` of the real site

    @property
    def site(self) -> Path:
        return self.workdir / "site"


def start() -> FakedClockBuild | None:
    """Start the build; None without faketime (the test then says what to install)."""
    faketime = shutil.which(FAKETIME)
    if faketime is None:
        return None
    workdir = Path(tempfile.mkdtemp(prefix="autograd-traced-faked-clock-"))
    wrapper = (faketime, FAKED_CLOCK)
    build = CommandBuild.start(ROOT, workdir / "site", workdir / "build.log", wrapper=wrapper)
    return FakedClockBuild(workdir, build)
