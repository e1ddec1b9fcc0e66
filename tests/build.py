"""Run the real strict MkDocs build, as CI and `nox -s docs` do, in a subprocess."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

# What a copy of the site needs to build: everything else (site/, .git, .nox) stays behind.
SITE_SOURCES = ("mkdocs.yml", "conftest.py", "pyproject.toml", "docs", "snippets", "hooks")


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
    destination.mkdir(parents=True)
    for name in SITE_SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source, destination / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(source, destination / name)
    return destination
