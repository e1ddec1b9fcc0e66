"""Start the real `mkdocs build --strict` runs before anything else: the harness's build of
the broken site, and the build of the real site under a faked clock (tests/faked_clock.py).

That command starts a fresh Python that imports torch: it would add about 1.7 s to a 3 s run.
So each runs in a background process, beside the tests, from the start of the session, and
the tests that read them run last, when they have finished.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from autograd_traced import provenance
from tests import broken_copy, faked_clock
from tests.build import CommandBuild
from tests.paths import ROOT

HARNESS = Path(__file__).parent / "test_harness.py"
SITE_BUILD = Path(__file__).parent / "test_site_build.py"
STARTED = pytest.StashKey[broken_copy.BrokenSite]()
FAKED = pytest.StashKey[faked_clock.FakedClockBuild | None]()
BACKGROUND = ("broken_site", "faked_clock_site")  # the fixtures of the background builds


@pytest.hookimpl(tryfirst=True)  # before the root conftest imports torch: a second earlier
def pytest_configure(config: pytest.Config) -> None:
    if _selected(config, HARNESS) and not config.option.collectonly:
        _start(config)
    if _selected(config, SITE_BUILD) and not config.option.collectonly:
        _start_faked_clock(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # What needs the background build goes last: by then it is done.
    items.sort(key=lambda item: any(f in BACKGROUND for f in getattr(item, "fixturenames", ())))


def pytest_unconfigure(config: pytest.Config) -> None:
    if STARTED in config.stash:
        config.stash[STARTED].build.stop()
        shutil.rmtree(config.stash[STARTED].workdir, ignore_errors=True)
    if config.stash.get(FAKED, None) is not None:
        config.stash[FAKED].build.stop()
        shutil.rmtree(config.stash[FAKED].workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def broken_site(request: pytest.FixtureRequest) -> broken_copy.BrokenSite:
    """The copy of the site with the broken pages (tests/broken_copy.py), being built."""
    return _start(request.config)


@pytest.fixture(scope="session")
def faked_clock_site(request: pytest.FixtureRequest) -> faked_clock.FakedClockBuild:
    """The real site, being built with the clock faked years ahead (tests/faked_clock.py)."""
    started = _start_faked_clock(request.config)
    if started is None:
        pytest.fail(f"{faked_clock.FAKETIME} not found: `apt-get install faketime`", pytrace=False)
    return started


def _start_faked_clock(config: pytest.Config) -> faked_clock.FakedClockBuild | None:
    if FAKED not in config.stash:
        config.stash[FAKED] = faked_clock.start()
    return config.stash[FAKED]


def _start(config: pytest.Config) -> broken_copy.BrokenSite:
    if STARTED not in config.stash:
        workdir = Path(tempfile.mkdtemp(prefix="autograd-traced-broken-"))
        root = broken_copy.make(workdir / "repo")
        # The copy has no .git: told the commit, it gets the real build's footer.
        told = provenance.read(ROOT).environment()
        command = CommandBuild.start(root, root / "site", workdir / "build.log", env=told)
        config.stash[STARTED] = broken_copy.BrokenSite(workdir, root, command)
    return config.stash[STARTED]


def _selected(config: pytest.Config, path: Path) -> bool:
    """Whether the command line's paths include `path` (before -k or deselection)."""
    from_testpaths = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    base = config.rootpath if from_testpaths else config.invocation_params.dir
    for arg in config.args:
        target = (base / arg.split("::")[0]).resolve()
        if target == path or target in path.parents:
            return True
    return False
