"""Run the real strict MkDocs build, as CI and `nox -s docs` do, in a subprocess."""

import os
import subprocess
import sys
from pathlib import Path

from autograd_traced import local_site
from tests.paths import ROOT


def build(root: Path, site_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def copy_site_sources(destination: Path) -> Path:
    return local_site.copy_site_sources(ROOT, destination)
