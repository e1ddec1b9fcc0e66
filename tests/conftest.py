"""Start the harness's real `mkdocs build --strict` of the broken site before anything else.

That command starts a fresh Python that imports torch: it would add about 1.7 s to a 3 s run.
So it runs in a background process, on the machine's other core, from the start of the
session, and the tests that read it run last, when it has finished.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests import broken_copy
from tests.build import CommandBuild

HARNESS = Path(__file__).parent / "test_harness.py"
STARTED = pytest.StashKey[broken_copy.BrokenSite]()


@pytest.hookimpl(tryfirst=True)  # before the root conftest imports torch: a second earlier
def pytest_configure(config: pytest.Config) -> None:
    if _selected(config, HARNESS) and not config.option.collectonly:
        _start(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # What needs the background build goes last: by then it is done.
    items.sort(key=lambda item: "broken_site" in getattr(item, "fixturenames", ()))


def pytest_unconfigure(config: pytest.Config) -> None:
    if STARTED in config.stash:
        config.stash[STARTED].build.stop()
        shutil.rmtree(config.stash[STARTED].workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def broken_site(request: pytest.FixtureRequest) -> broken_copy.BrokenSite:
    """The copy of the site with the broken pages (tests/broken_copy.py), being built."""
    return _start(request.config)


def _start(config: pytest.Config) -> broken_copy.BrokenSite:
    if STARTED not in config.stash:
        workdir = Path(tempfile.mkdtemp(prefix="autograd-traced-broken-"))
        root = broken_copy.make(workdir / "repo")
        command = CommandBuild.start(root, root / "site", workdir / "build.log")
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
