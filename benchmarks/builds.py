"""Strict builds, timed as whole processes: the site with execution on and off, an
N-article-page copy against the same Markdown through a plain Material build, and that copy's
warm builds (the results cache full: nothing changed, or one snippet edited).

Builds run with `-v`, both sides of each ratio alike, so the engine's stage record is logged.
The CPU time of the builds with execution, over their wall time, tells how many cores they use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograd_traced.tools.local_site import strict_build_command
from benchmarks.harness import PYTHON, ROOT, Samples, base_env, interleave, run, run_timed
from benchmarks.scaled_site import ScaledSite, edit_snippet


@dataclass
class BuildSide:
    """One side of a ratio: returns each build's wall time, keeps its CPU time and log."""

    site: Path
    site_dirs: Path  # each build writes to site_dirs-<round>
    execute: bool = True
    config: Path | None = None  # another config file than the site's mkdocs.yml
    cache: bool = False  # the results cache: off (every page runs) unless measuring it
    before: Callable[[int], None] | None = None  # untimed, before each round's build
    cpu: list[float] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    def __call__(self, round_: int) -> float:
        command = [*strict_build_command(Path(f"{self.site_dirs}-{round_}")), "-v"]
        if self.config:
            command += ["--config-file", str(self.config)]
        if self.before:
            self.before(round_)
        env = base_env(execute=self.execute, cache=self.cache)
        timed = run_timed(command, env=env, cwd=self.site)
        self.cpu.append(timed.cpu)
        self.logs.append(timed.output)
        return timed.wall


def measure_execution(repeat: int, workdir: Path) -> tuple[Samples, list[str]]:
    """The real site, execution on and off, interleaved; also returns the on-builds' logs."""
    on = BuildSide(ROOT, workdir / "site-on")
    off = BuildSide(ROOT, workdir / "site-off", execute=False)
    sides = {"build_on": on, "build_off": off}
    return interleave(sides, repeat) | cpu_samples(sides), on.logs


def measure_scale(site: ScaledSite, repeat: int, workdir: Path) -> tuple[Samples, list[str]]:
    """The N-page copy with execution against its plain Material build, interleaved."""
    on = BuildSide(site.root, workdir / "scaled-on")
    plain = BuildSide(site.root, workdir / "scaled-plain", config=site.plain_config)
    sides = {"scale_build_on": on, "scale_build_plain": plain}
    return interleave(sides, repeat) | cpu_samples(sides), on.logs


def measure_warm(
    site: ScaledSite, repeat: int, workdir: Path
) -> tuple[Samples, dict[str, list[str]]]:
    """The N-page copy with the results cache full, interleaved with its plain Material build:
    nothing changed since the last build, and one snippet edited (one page runs). A first
    build, untimed, fills the cache; the edited snippet is restored after. Also returns each
    warm side's logs."""
    run(strict_build_command(workdir / "warm-first"), env=base_env(cache=True), cwd=site.root)
    original = site.edited_snippet.read_text(encoding="utf-8")
    warm = BuildSide(site.root, workdir / "warm", cache=True)
    edited = BuildSide(
        site.root,
        workdir / "warm-edited",
        cache=True,
        before=lambda round_: edit_snippet(site.edited_snippet, original, round_),
    )
    plain = BuildSide(site.root, workdir / "warm-plain", config=site.plain_config)
    sides = {"warm_build": warm, "warm_build_edit": edited, "warm_build_plain": plain}
    try:
        samples = interleave(sides, repeat) | cpu_samples(sides)
        return samples, {"nothing changed": warm.logs, "one snippet edited": edited.logs}
    finally:
        site.edited_snippet.write_text(original, encoding="utf-8")


def cpu_samples(sides: dict[str, BuildSide]) -> Samples:
    """The CPU times, as `<name>_cpu`: less disturbed than wall time by a busy machine."""
    return {f"{name}_cpu": side.cpu for name, side in sides.items()}


PROBE = """\
import runpy, sys
sys.argv = ['mkdocs', 'build', '--strict', '--site-dir', sys.argv[1]]
try:
    runpy.run_module('mkdocs', run_name='__main__', alter_sys=True)
except SystemExit as exit_:
    if exit_.code not in (None, 0):
        raise
import os  # a Python child still running is the fork server, which imports torch for the pages
children = open(f'/proc/{os.getpid()}/task/{os.getpid()}/children').read().split()
python = os.path.realpath(sys.executable)  # not KaTeX's node, which a build keeps for serve
server = [pid for pid in children if os.path.realpath(f'/proc/{pid}/exe') == python]
print('TORCH_IMPORTED', 'torch' in sys.modules or bool(server))
"""


@dataclass(frozen=True)
class Probed:
    torch_imported: bool  # by the build's process, or by a fork server it started
    log: str


def probe_build(site: Path, site_dir: Path, env: dict[str, str]) -> Probed:
    """`mkdocs build --strict` of `site` in a Python that then tells whether torch was imported."""
    output = run([PYTHON, "-c", PROBE, str(site_dir)], env=env, cwd=site)
    return Probed("TORCH_IMPORTED True" in output, output)


def torch_import_checks(workdir: Path) -> dict[str, tuple[bool, bool]]:
    """Build once each way, untimed: was torch imported (and should it have been)? If
    execution off imports torch, execution_cost does not measure what it claims."""
    checks = {}
    for execute in (True, False):
        probed = probe_build(ROOT, workdir / f"probe-{execute}", base_env(execute=execute))
        name = f"torch imported by a build with execution {'on' if execute else 'off'}"
        checks[name] = (probed.torch_imported, execute)
    return checks
