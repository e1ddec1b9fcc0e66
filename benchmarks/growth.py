"""How builds grow with the site: at each size (5, 40, 200 article pages by default), one cold
strict build (every page run, into an empty results cache), one warm build (nothing changed),
one after a snippet edit (one page runs) and the plain Material build of the same Markdown.
Each is a whole process, timed, with its CPU time and the peak memory of its largest process.

The figures to compare are per page: what each build costs over plain Material, divided by
the pages, and how the peak grows; a regression that is per page shows as that figure growing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from autograd_traced.tools.local_site import strict_build_command
from benchmarks.harness import PYTHON, ROOT, Samples, base_env, log, run
from benchmarks.scaled_site import edit_snippet, make_scaled_site

DEFAULT_SIZES = (5, 40, 200)
KINDS = ("cold", "warm", "edit", "plain")  # the builds at each size, in the order they run

# Runs the build and says the peak resident memory of the largest process it waited for
# (the build, the fork server, a page's process): getrusage's ru_maxrss of this wrapper's
# children, in KiB on Linux. A wrapper of its own per build: the benchmark's own children
# would keep the largest of every build before.
PEAK_MARK = "GROWTH_PEAK_KIB "
_PEAK = (
    "import resource, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)\n"
    "wall = time.perf_counter() - start\n"
    "sys.stdout.write(done.stdout.decode(errors='replace'))\n"
    "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    f"print({PEAK_MARK!r}, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, wall)\n"
    "sys.exit(done.returncode)\n"
)


@dataclass(frozen=True)
class Build:
    wall: float  # seconds
    cpu: float  # user + system seconds of the build and every process it waited for
    peak_mib: float  # the largest single process


@dataclass(frozen=True)
class Size:
    pages: int  # article pages (the home page aside)
    builds: dict[str, Build]  # by kind

    def per_page_over_plain(self, kind: str) -> float:
        """Seconds the build costs over plain Material, per article page."""
        return (self.builds[kind].wall - self.builds["plain"].wall) / self.pages


def measured_build(argv: list[str], *, env: dict[str, str], cwd: Path) -> Build:
    output = run([PYTHON, "-c", _PEAK, *argv], env=env, cwd=cwd)
    line = next(line for line in output.splitlines() if line.startswith(PEAK_MARK))
    kib, cpu, wall = line.removeprefix(PEAK_MARK).split()
    return Build(wall=float(wall), cpu=float(cpu), peak_mib=int(kib) / 1024)


def measure_size(pages: int, workdir: Path) -> Size:
    site = make_scaled_site(ROOT, workdir / f"growth-{pages}", pages)
    cache_dir = f".cache/growth-{pages}"  # empty: the cold build runs every page and fills it
    cached = base_env(cache=True) | {"AUTOGRAD_TRACED_CACHE_DIR": cache_dir}

    def build(kind: str, env: dict[str, str], *flags: str) -> Build:
        command = [*strict_build_command(workdir / f"growth-{pages}-{kind}"), *flags]
        return measured_build(command, env=env, cwd=site.root)

    builds = {"cold": build("cold", cached), "warm": build("warm", cached)}
    original = site.edited_snippet.read_text(encoding="utf-8")
    edit_snippet(site.edited_snippet, original, 0)
    builds["edit"] = build("edit", cached)
    builds["plain"] = build("plain", base_env(), "--config-file", str(site.plain_config))
    for kind in KINDS:
        found = builds[kind]
        log(
            f"  {pages} pages, {kind}: {found.wall:.2f} s, {found.cpu:.2f} s CPU, "
            f"{found.peak_mib:.0f} MiB"
        )
    return Size(pages, builds)


def measure_growth(sizes: tuple[int, ...], workdir: Path) -> tuple[Samples, list[Size]]:
    """Each size once, smallest first; the samples are `growth_<kind> <pages>` (wall seconds)."""
    found = [measure_size(pages, workdir) for pages in sizes]
    samples = {
        f"growth_{kind} {size.pages}": [size.builds[kind].wall] for size in found for kind in KINDS
    }
    return samples, found


def growth_table(sizes: list[Size]) -> list[str]:
    """Wall (CPU) seconds and peak MiB of each build, and the per-page costs over plain."""
    lines = [
        "| article pages | cold | warm | one edit | plain Material "
        "| cold, per page over plain | warm, per page over plain | peak MiB cold / warm / plain |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for size in sizes:
        b = size.builds
        times = " | ".join(f"{b[kind].wall:.2f} s ({b[kind].cpu:.2f} s)" for kind in KINDS)
        peaks = " / ".join(f"{b[kind].peak_mib:.0f}" for kind in ("cold", "warm", "plain"))
        lines.append(
            f"| {size.pages} | {times} | {size.per_page_over_plain('cold'):.3f} s "
            f"| {size.per_page_over_plain('warm'):.3f} s | {peaks} |"
        )
    return lines


def as_json(sizes: list[Size]) -> list[dict[str, object]]:
    return [
        {"pages": size.pages, "builds": {kind: asdict(b) for kind, b in size.builds.items()}}
        for size in sizes
    ]
