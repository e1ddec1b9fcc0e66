"""The commands people run: `nox -s docs`, `serve`, `preview`, `tests`, `browser`, `lint`, ...

Sessions install with pip into plain venvs: pip finds the local CPU build of torch==2.13.0,
which uv and poetry would not (they would download a multi-GB CUDA build instead).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
sys.path.insert(0, str(ROOT / "src"))  # local_site needs only the standard library
from autograd_traced.tools.lighthouse import VERSION as LIGHTHOUSE_VERSION  # noqa: E402
from autograd_traced.tools.local_site import CHROMIUM, HOST, PORT, SERVE_ARGS  # noqa: E402

nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests", "browser"]

TORCH_VERSIONS = ["2.13.0", "2.14.1"]
QUIET = {"NO_MKDOCS_2_WARNING": "1"}
TOOLS = {"dot": "graphviz", "node": "nodejs"}  # command -> Debian package the build needs
TEST_TOOLS = {"faketime": "faketime"}  # ... and the tests besides (a build on a faked day)
# ... and the browser tests: a page printed, Lighthouse installed
BROWSER_TOOLS = {"pdftotext": "poppler-utils", "npm": "npm"}


def install_project(session: nox.Session, extras: str = "test") -> None:
    session.install("-e", f".[{extras}]")


def require_system_packages(session: nox.Session, *, browser: bool, tests: bool = False) -> None:
    """Graphviz draws the diagrams, Node.js renders the math, Chromium runs the browser test,
    faketime builds the site on another day for the tests, pdftotext reads a printed page.

    Installed with apt-get when missing and we may (root); otherwise the session says what to do.
    """
    tools = {**TOOLS, **(TEST_TOOLS if tests else {}), **(BROWSER_TOOLS if browser else {})}
    missing = [package for tool, package in tools.items() if not shutil.which(tool)]
    if browser and not Path(CHROMIUM).exists():
        missing.append("chromium")
    if not missing:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        session.error(f"missing system packages: run `sudo apt-get install {' '.join(missing)}`")
    session.run("apt-get", "update", "-qq", external=True)
    session.run(
        "apt-get",
        "install",
        "-y",
        "-qq",
        *missing,
        external=True,
        env={"DEBIAN_FRONTEND": "noninteractive"},
    )


@nox.session
def docs(session: nox.Session) -> None:
    """Build the site strictly into site/: any warning, broken link or failing snippet fails."""
    require_system_packages(session, browser=False)
    install_project(session)
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", env=QUIET)


@nox.session
def serve(session: nox.Session) -> None:
    """Serve the site on 127.0.0.1:8000 (under its path), re-running snippets on save.

    --dirty: a rebuild writes only the pages whose inputs changed (build.incremental)."""
    require_system_packages(session, browser=False)
    install_project(session)
    address = f"{HOST}:{PORT}"
    session.run("mkdocs", *SERVE_ARGS, "--dev-addr", address, *session.posargs, env=QUIET)


@nox.session
def preview(session: nox.Session) -> None:
    """Serve site/ as published (its path, its 404 page) on http://127.0.0.1:8000, offline."""
    require_system_packages(session, browser=False)
    install_project(session)
    session.run("python", "-m", "autograd_traced.tools.preview", *session.posargs, env=QUIET)


@nox.session
def tests(session: nox.Session) -> None:
    """Snippets (Sybil), unit tests, the strict build and the harness's own tests."""
    require_system_packages(session, browser=False, tests=True)
    install_project(session)
    # One worker per core; the tests that read a background command (a build, a server)
    # run in one worker, grouped by that command (tests/conftest.py).
    session.run(
        "pytest",
        "--ignore=tests/browser",
        "--require-snippets",
        "--numprocesses=auto",
        "--dist=loadgroup",
        *session.posargs,
        env=QUIET,
    )


@nox.session
def browser(session: nox.Session) -> None:
    """Open every page of the built site in headless Chromium (offline, no third-party host)."""
    require_system_packages(session, browser=True)
    install_project(session, extras="test,browser")
    # Pages are read independently: one worker per core, each with its own build and server.
    session.run(
        "pytest",
        "tests/browser",
        "--numprocesses=auto",
        *session.posargs,
        env={**QUIET, "CHROMIUM": CHROMIUM, "LIGHTHOUSE": install_lighthouse(session)},
    )


def install_lighthouse(session: nox.Session) -> str:
    """npm's Lighthouse, pinned, in .nox/lighthouse (kept between runs); its executable.

    An install that fails (the npm registry out of reach) does not stop the session: every
    other browser test still runs, and test_lighthouse fails under CI, saying so."""
    folder = ROOT / ".nox" / "lighthouse"
    executable = folder / "node_modules" / ".bin" / "lighthouse"
    if not executable.exists():
        command = ["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund"]
        session.log(" ".join([*command, f"lighthouse@{LIGHTHOUSE_VERSION}"]))
        done = subprocess.run([*command, f"lighthouse@{LIGHTHOUSE_VERSION}"], check=False)
        if done.returncode != 0:
            session.warn(f"npm could not install lighthouse (exit {done.returncode})")
    return str(executable)


def requirements_with_torch(version: str) -> list[str]:
    """The project's pinned requirements, with torch swapped for `version`."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = project["dependencies"] + project["optional-dependencies"]["test"]
    return [f"torch=={version}" if pin.startswith("torch==") else pin for pin in pins]


@nox.session(name="torch-matrix")
@nox.parametrize("torch_version", TORCH_VERSIONS)
def torch_matrix(session: nox.Session, torch_version: str) -> None:
    """The snippets against each torch release on disk: their outputs must agree."""
    require_system_packages(session, browser=False)
    session.install(*requirements_with_torch(torch_version))
    session.install("--no-deps", "-e", ".")
    session.run("python", "-c", "import torch; print('torch', torch.__version__)")
    session.run(
        "pytest",
        "docs",
        "tests/site/test_prose_numbers.py",
        "tests/site/test_snippet_coverage.py",
        "--require-snippets",
        *session.posargs,
        env=QUIET,
    )


@nox.session(name="update-examples")
def update_examples(session: nox.Session) -> None:
    """Rewrite the expected outputs in snippets/ from what the code prints now, then re-check."""
    install_project(session)
    session.run("pytest", "docs", "--update-examples", "-q", *session.posargs)
    session.run("pytest", "docs", "-q", "--require-snippets")


@nox.session
def bench(session: nox.Session) -> None:
    """Measure the targets: execution cost, a 40-page copy against plain Material, serve,
    Lighthouse."""
    require_system_packages(session, browser=True)
    install_project(session)
    lighthouse = install_lighthouse(session)
    session.run(
        "python", "-m", "benchmarks", *session.posargs, env={**QUIET, "LIGHTHOUSE": lighthouse}
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff lint and format check over all Python, snippets included; zizmor over the workflows."""
    session.install("ruff==0.17.6", "zizmor==1.33.1")
    session.install("--no-deps", "-e", ".")  # for the snippet linter, without torch
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("python", "-m", "autograd_traced.tools.lint_snippets")
    # Offline: only the audits that read the files (pinning, permissions, credentials), no API token
    session.run("zizmor", "--offline", ".github/workflows")
