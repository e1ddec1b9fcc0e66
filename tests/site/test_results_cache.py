"""The results cache in the real command: a build whose pages did not change imports no torch
and runs no page, one after a snippet edit runs that page only, and both write the same site
as a cold build."""

import re
from pathlib import Path

from autograd_traced.build import provenance
from benchmarks.builds import probe_build
from benchmarks.harness import base_env
from tests.support.build import copy_site_sources
from tests.support.paths import ROOT

EDITED = "snippets/computing_gradients/hand_check.pycon"  # used by one page


def pages_run(log: str) -> int:
    (count,) = re.findall(r"Results cache: (\d+) page\(s\) run", log)
    return int(count)


def files(site: Path) -> dict[str, bytes]:
    return {
        path.relative_to(site).as_posix(): path.read_bytes()
        for path in site.rglob("*")
        if path.is_file()
    }


def test_a_warm_build_runs_only_the_pages_that_changed(tmp_path: Path) -> None:
    root = copy_site_sources(tmp_path / "repo")
    # The copy has no .git: told the commit, it gets the real build's footer.
    env = base_env(cache=True) | provenance.read(ROOT).environment()
    cold = probe_build(root, tmp_path / "cold", env)
    assert cold.torch_imported and pages_run(cold.log) > 1, cold.log
    warm = probe_build(root, tmp_path / "warm", env)
    assert pages_run(warm.log) == 0, warm.log
    assert not warm.torch_imported, "nothing changed: no fork server, no torch"
    assert files(tmp_path / "warm") == files(tmp_path / "cold")
    snippet = root / EDITED
    snippet.write_text(snippet.read_text() + ">>> edited = 1\n")
    edited = probe_build(root, tmp_path / "edited", env)
    assert pages_run(edited.log) == 1, edited.log
    assert edited.torch_imported
