"""Start the real commands some tests read before anything else: the harness's builds of
its copies of the site, and `mkdocs serve` on a broken copy.

Each command starts a fresh Python that imports torch: about 1.7 s each. So they run in
background processes, from the start of the session, and the tests that read them run
last, when they have finished.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests import broken_copy
from tests.build import CommandBuild
from tests.serve_copy import ServeCopy

HARNESS = Path(__file__).parent / "test_harness.py"
SERVE = Path(__file__).parent / "test_serve.py"
STARTED = pytest.StashKey[broken_copy.Copies]()
SERVING = pytest.StashKey[ServeCopy]()
BACKGROUND = ("copies", "serve_copy")  # the fixtures that read a background command


@pytest.hookimpl(tryfirst=True)  # before the root conftest imports torch: a second earlier
def pytest_configure(config: pytest.Config) -> None:
    if config.option.collectonly:
        return
    if _selected(config, SERVE):
        _serve(config)
    if _selected(config, HARNESS):
        _start(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # What needs a background command goes last: by then it is done.
    items.sort(key=lambda item: any(f in getattr(item, "fixturenames", ()) for f in BACKGROUND))


def pytest_unconfigure(config: pytest.Config) -> None:
    if SERVING in config.stash:
        config.stash[SERVING].stop()
        shutil.rmtree(config.stash[SERVING].root.parent, ignore_errors=True)
    if STARTED in config.stash:
        config.stash[STARTED].stop()
        shutil.rmtree(config.stash[STARTED].workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def serve_copy(request: pytest.FixtureRequest) -> ServeCopy:
    """`mkdocs serve` of a copy of the site with a broken snippet (tests/serve_copy.py)."""
    return _serve(request.config)


def _serve(config: pytest.Config) -> ServeCopy:
    if SERVING not in config.stash:
        config.stash[SERVING] = ServeCopy.start(Path(tempfile.mkdtemp(prefix="autograd-serve-")))
    return config.stash[SERVING]


@pytest.fixture(scope="session")
def copies(request: pytest.FixtureRequest) -> broken_copy.Copies:
    """The passing and the broken copy of the site (tests/broken_copy.py), being built."""
    return _start(request.config)


def _start(config: pytest.Config) -> broken_copy.Copies:
    if STARTED not in config.stash:
        workdir = Path(tempfile.mkdtemp(prefix="autograd-traced-copies-"))
        passing = broken_copy.make_passing(workdir / "passing" / "repo")
        broken = broken_copy.make_broken(workdir / "broken" / "repo")
        config.stash[STARTED] = broken_copy.Copies(
            workdir,
            passing,
            broken,
            CommandBuild.start(passing, passing / "site", workdir / "passing.log", "--strict"),
            CommandBuild.start(broken, broken / "site", workdir / "broken.log", "-q"),
        )
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
