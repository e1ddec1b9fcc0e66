"""Build a site with the strict MkDocs build: in this process, or as the real command.

In-process builds share the test session's torch import (a build then costs a third of
`mkdocs build --strict`). The harness runs the real command, in the background.
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from material.plugins.search.plugin import SearchPlugin
from mkdocs.commands.build import build as mkdocs_build
from mkdocs.config import load_config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort

from autograd_traced.build.failures import WRITER_LOG
from autograd_traced.tools import local_site
from tests.support.paths import ROOT


@dataclass(frozen=True)
class Build:
    ok: bool
    log: str  # what `mkdocs build` would print: one "LEVEL    -  message" per record


def build(
    root: Path,
    site_dir: Path,
    *,
    strict: bool = True,
    quiet: bool = False,
    verbose: bool = False,
    site_url: str | None = None,
) -> Build:
    """`mkdocs build --strict --site-dir site_dir` for the site at `root`, in this process.

    `quiet` logs what `mkdocs build -q` shows: errors only (and strict mode counts no warnings);
    `verbose` what `-v` shows, debug records too.
    `site_url` builds for that address, as `SITE_URL=...` in front of the command would.
    """
    address = {} if site_url is None else {"SITE_URL": site_url}

    def run() -> None:
        with mock.patch.dict(os.environ, address):  # read by mkdocs.yml's !ENV
            config = load_config(str(root / "mkdocs.yml"), site_dir=str(site_dir), strict=strict)
        config.plugins.on_startup(command="build", dirty=False)  # as `mkdocs build` does
        _as_a_new_process(config)
        try:
            mkdocs_build(config)
        finally:
            config.plugins.on_shutdown()

    return _logged(run, quiet=quiet, verbose=verbose)


def _as_a_new_process(config: MkDocsConfig) -> None:
    """What a new `mkdocs build` process starts without and a plugin kept across loads in
    this one (any plugin with on_startup) still holds: Material's search plugin keeps the
    index of the last `serve --dirty` build and merges its pages into the next index."""
    for plugin in config.plugins.values():
        if isinstance(plugin, SearchPlugin):
            plugin.search_index_prev = None


def serve_build(root: Path, site_dir: Path, *, dirty: bool, first: bool) -> Build:
    """One build of `mkdocs serve [--dirty]`, in this process: the first one announces the
    command to the plugins (on_startup), as `mkdocs serve` does once; every one reads the
    config afresh, as each rebuild does (the plugin is kept), and builds for the same address."""

    def run() -> None:
        config = load_config(str(root / "mkdocs.yml"), site_dir=str(site_dir))
        if first:
            config.plugins.on_startup(command="serve", dirty=dirty)
        mkdocs_build(config, serve_url=config.site_url, dirty=dirty)

    return _logged(run, quiet=False, verbose=False)


def _logged(run: Callable[[], None], *, quiet: bool, verbose: bool) -> Build:
    """Run a build, keeping what it logs; an Abort (a strict build's failure) ends the build,
    not the test."""
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    mkdocs_log = logging.getLogger("mkdocs")
    # What serve reports to the writer goes to the terminal beside MkDocs' log.
    writer_log = logging.getLogger(WRITER_LOG)
    level = mkdocs_log.level
    mkdocs_log.addHandler(handler)
    writer_log.addHandler(handler)
    mkdocs_log.setLevel(logging.ERROR if quiet else logging.DEBUG if verbose else logging.INFO)
    try:
        run()
        ok = True
    except Abort as abort:
        log.write(f"{abort}\n")
        ok = False
    finally:
        mkdocs_log.removeHandler(handler)
        writer_log.removeHandler(handler)
        mkdocs_log.setLevel(level)
    return Build(ok, log.getvalue())


@dataclass(frozen=True)
class CommandBuild:
    """The real `mkdocs build --strict`, running in the background; `result()` waits for it."""

    process: subprocess.Popen[bytes]
    log_file: Path

    @classmethod
    def start(
        cls,
        root: Path,
        site_dir: Path,
        log_file: Path,
        *flags: str,
        wrapper: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> CommandBuild:
        """Start `mkdocs build FLAGS`; `wrapper` goes in front of the command (faketime and its
        date), `env` adds variables to this process's environment."""
        with log_file.open("wb") as log:  # the child keeps its own handle
            process = subprocess.Popen(
                [*wrapper, *local_site.build_command(site_dir, *flags)],
                cwd=root,
                env={**os.environ, **(env or {}), "NO_MKDOCS_2_WARNING": "1"},
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return cls(process, log_file)

    def result(self, timeout: float = 600) -> Build:
        self.process.wait(timeout)
        return Build(self.process.returncode == 0, self.log_file.read_text())

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def copy_site_sources(destination: Path) -> Path:
    return local_site.copy_site_sources(ROOT, destination)
