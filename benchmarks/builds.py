"""Strict builds, timed as whole processes: the site with execution on and off, and an
N-article-page copy against the same Markdown through a plain Material build.

Builds run with `-v`, both sides of each ratio alike, so the engine's stage record is logged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from autograd_traced.local_site import strict_build_command
from benchmarks.harness import PYTHON, ROOT, Samples, base_env, interleave, run, run_timed
from benchmarks.scaled_site import ScaledSite


def timed_build(
    site: Path, site_dir: Path, logs: list[str], *, execute: bool = True, config: str = ""
) -> float:
    """One strict build of `site` into `site_dir`; its log is appended to `logs`."""
    options = ["--config-file", config] if config else []
    seconds, output = run_timed(
        [*strict_build_command(site_dir), "-v", *options], env=base_env(execute=execute), cwd=site
    )
    logs.append(output)
    return seconds


def measure_execution(repeat: int, workdir: Path) -> tuple[Samples, list[str]]:
    """The real site, execution on and off, interleaved; returns samples and the on-builds' logs."""
    logs: list[str] = []

    def build(execute: bool) -> Callable[[int], float]:
        label = "on" if execute else "off"
        return lambda i: timed_build(
            ROOT, workdir / f"site-{label}-{i}", logs if execute else [], execute=execute
        )

    return interleave({"build_on": build(True), "build_off": build(False)}, repeat), logs


def measure_scale(site: ScaledSite, repeat: int, workdir: Path) -> tuple[Samples, list[str]]:
    """The N-page copy with execution against its plain Material build, interleaved."""
    logs: list[str] = []
    return interleave(
        {
            "scale_build_on": lambda i: timed_build(site.root, workdir / f"scale-on-{i}", logs),
            "scale_build_plain": lambda i: timed_build(
                site.root, workdir / f"scale-plain-{i}", [], config=str(site.plain_config)
            ),
        },
        repeat,
    ), logs


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
