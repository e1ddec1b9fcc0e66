"""Strict builds, timed as whole processes: the site with execution on and off, and an
N-article-page copy against the same Markdown through a plain Material build.

Builds run with `-v`, both sides of each ratio alike, so the engine's stage record is logged.
The CPU time of the builds with execution, over their wall time, tells how many cores they use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograd_traced.local_site import strict_build_command
from benchmarks.harness import PYTHON, ROOT, Samples, base_env, interleave, run, run_timed
from benchmarks.scaled_site import ScaledSite


@dataclass
class BuildSide:
    """One side of a ratio: returns each build's wall time, keeps its CPU time and log."""

    site: Path
    site_dirs: Path  # each build writes to site_dirs-<round>
    execute: bool = True
    config: Path | None = None  # another config file than the site's mkdocs.yml
    cpu: list[float] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    def __call__(self, round_: int) -> float:
        command = [*strict_build_command(Path(f"{self.site_dirs}-{round_}")), "-v"]
        if self.config:
            command += ["--config-file", str(self.config)]
        timed = run_timed(command, env=base_env(execute=self.execute), cwd=self.site)
        self.cpu.append(timed.cpu)
        self.logs.append(timed.output)
        return timed.wall


def measure_execution(repeat: int, workdir: Path) -> tuple[Samples, list[str]]:
    """The real site, execution on and off, interleaved; also returns the on-builds' logs."""
    on = BuildSide(ROOT, workdir / "site-on")
    off = BuildSide(ROOT, workdir / "site-off", execute=False)
    samples = interleave({"build_on": on, "build_off": off}, repeat)
    return samples | {"build_on_cpu": on.cpu}, on.logs


def measure_scale(site: ScaledSite, repeat: int, workdir: Path) -> tuple[Samples, list[str]]:
    """The N-page copy with execution against its plain Material build, interleaved."""
    on = BuildSide(site.root, workdir / "scaled-on")
    plain = BuildSide(site.root, workdir / "scaled-plain", config=site.plain_config)
    samples = interleave({"scale_build_on": on, "scale_build_plain": plain}, repeat)
    return samples | {"scale_build_on_cpu": on.cpu}, on.logs


PROBE = """\
import runpy, sys
sys.argv = ['mkdocs', 'build', '--strict', '--site-dir', sys.argv[1]]
try:
    runpy.run_module('mkdocs', run_name='__main__', alter_sys=True)
except SystemExit as exit_:
    if exit_.code not in (None, 0):
        raise
print('TORCH_IMPORTED', 'torch' in sys.modules)
"""


def torch_imported_by_build(site_dir: Path, *, execute: bool) -> bool:
    """Build once, untimed, and tell whether torch was imported: execution off must not."""
    output = run([PYTHON, "-c", PROBE, str(site_dir)], env=base_env(execute=execute))
    return "TORCH_IMPORTED True" in output
