"""Start the real commands some tests read before anything else: the harness's builds of
its copies of the site, `mkdocs serve` on a broken copy, and the build of the real site under
a faked clock (tests/faked_clock.py).

Each command starts a fresh Python that imports torch: about 1.7 s each. So they run in
background processes, from the start of the session, and the tests that read them run
last, when they have finished.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from autograd_traced.build import provenance
from tests.support import broken_copy, faked_clock
from tests.support.build import Build, CommandBuild, build
from tests.support.paths import ROOT
from tests.support.serve_copy import ServeCopy
from tests.support.workers import parallel

HARNESS = Path(__file__).parent / "site" / "test_harness.py"
SERVE = Path(__file__).parent / "site" / "test_serve.py"
SITE_BUILD = Path(__file__).parent / "site" / "test_site_build.py"
STARTED = pytest.StashKey[broken_copy.Copies]()
SERVING = pytest.StashKey[ServeCopy]()
FAKED = pytest.StashKey[faked_clock.FakedClockBuild | None]()
BACKGROUND = ("copies", "serve_copy", "faked_clock_site")  # fixtures of background commands


@pytest.hookimpl(tryfirst=True)  # before the root conftest imports torch: a second earlier
def pytest_configure(config: pytest.Config) -> None:
    if config.option.collectonly or parallel(config):
        # Under pytest-xdist each command starts when its first test asks (the fixtures
        # below), in the one worker that runs its group of tests (pytest_collection_...).
        return
    if _selected(config, SERVE):
        _serve(config)
    if _selected(config, HARNESS):
        _start(config)
    if _selected(config, SITE_BUILD):
        _start_faked_clock(config)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # What needs a background command goes last: by then it is done.
    items.sort(key=lambda item: any(f in BACKGROUND for f in getattr(item, "fixturenames", ())))
    for item in items:  # under `--dist loadgroup`, one worker starts each command and reads it
        for fixture in set(BACKGROUND) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group(fixture))


def pytest_unconfigure(config: pytest.Config) -> None:
    if SERVING in config.stash:
        config.stash[SERVING].stop()
        shutil.rmtree(config.stash[SERVING].root.parent, ignore_errors=True)
    if STARTED in config.stash:
        config.stash[STARTED].stop()
        shutil.rmtree(config.stash[STARTED].workdir, ignore_errors=True)
    if config.stash.get(FAKED, None) is not None:
        config.stash[FAKED].build.stop()
        shutil.rmtree(config.stash[FAKED].workdir, ignore_errors=True)


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


def _start(config: pytest.Config) -> broken_copy.Copies:
    if STARTED not in config.stash:
        workdir = Path(tempfile.mkdtemp(prefix="autograd-traced-copies-"))
        passing = broken_copy.make_passing(workdir / "passing" / "repo")
        broken = broken_copy.make_broken(workdir / "broken" / "repo")
        # The copies have no .git: told the commit, they get the real build's footer.
        told = provenance.read(ROOT).environment()
        config.stash[STARTED] = broken_copy.Copies(
            workdir,
            passing,
            broken,
            CommandBuild.start(
                passing, passing / "site", workdir / "passing.log", "--strict", env=told
            ),
            CommandBuild.start(broken, broken / "site", workdir / "broken.log", "-q", env=told),
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


@pytest.fixture(scope="session")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    site = tmp_path_factory.mktemp("site")
    return site, build(ROOT, site)


@pytest.fixture(scope="session")
def built_site(site_build: tuple[Path, Build]) -> Path:
    site, result = site_build
    if not result.ok:  # one failure says so, with the log: test_strict_build_passes...
        pytest.skip("the strict build failed")
    return site
