"""Benchmark what executing the snippets costs: builds, `import torch`, tests, serve, page weight.

Run from anywhere: `python benchmarks/bench.py --repeat 5` (or `nox -s bench`). Prints medians,
ratios and PASS/FAIL lines for the targets, and writes everything to a JSON file. Ratios matter
more than absolute timings on a noisy machine; paired measurements are interleaved so that drift
affects both sides equally. Exits 0 even when a target fails: it is a benchmark, not a test.
Exits 1 when a measured command fails (a timing of a broken build means nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gzip
import importlib.metadata
import json
import os
import platform
import queue
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autograd_traced.build_mode import EXECUTE_VAR
from autograd_traced.local_site import (
    CHROMIUM,
    CHROMIUM_ARGS,
    HOST,
    copy_site_sources,
    serving,
    strict_build_command,
)

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "latest.json"
PYTHON = sys.executable
EDITED_PAGE = "docs/computing-gradients.md"
PAGE_BUDGET_BYTES = 600_000  # 600 KB, 1 KB = 1000 bytes
EXECUTION_COST_FACTOR = 1.10
SUITE_OVER_BUILD_MAX = 2.0
SERVE_TIMEOUT = 120.0  # seconds to wait for a serve log line
POLLING_INTERVAL = 0.5  # mkdocs serve polls the watched files twice a second
COMMAND_TIMEOUT = 1800.0
BENCHMARKS = ("build", "import", "suite", "serve", "pages")


class BenchError(RuntimeError):
    """A measured command failed or timed out: its timing would be meaningless."""


# --- running and timing commands ------------------------------------------------------------


def base_env(*, execute: bool = True) -> dict[str, str]:
    """The environment of every measured command; execution on unless asked otherwise."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONUNBUFFERED": "1"}
    env.pop(EXECUTE_VAR, None)  # on is the default: never inherit a stray "0"
    if not execute:
        env[EXECUTE_VAR] = "0"
    return env


def run(argv: Sequence[str], *, env: dict[str, str], cwd: Path = ROOT) -> str:
    """Run one command and return its stdout; raises BenchError when it fails."""
    result = subprocess.run(
        list(argv),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        output = (result.stdout + result.stderr)[-4000:]
        raise BenchError(f"{' '.join(argv)} exited {result.returncode}:\n{output}")
    return result.stdout


def run_timed(argv: Sequence[str], *, env: dict[str, str], cwd: Path = ROOT) -> float:
    """Wall time of one command, in seconds; raises BenchError when it fails."""
    start = time.perf_counter()
    run(argv, env=env, cwd=cwd)
    return time.perf_counter() - start


def interleave(
    commands: dict[str, Callable[[int], float]], repeat: int, log: Callable[[str], None]
) -> dict[str, list[float]]:
    """Run each command once per round, in turn (a, b, a, b, ...), `repeat` rounds."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for round_ in range(repeat):
        for name, command in commands.items():
            samples[name].append(command(round_))
            log(f"  {name} #{round_ + 1}: {samples[name][-1]:.2f} s")
    return samples


# --- 1. build with execution on and off -----------------------------------------------------


def measure_builds(
    repeat: int, workdir: Path, log: Callable[[str], None]
) -> tuple[dict[str, list[float]], Path]:
    """Strict builds, execution on and off, interleaved. Returns samples and the last on-site."""

    def build(execute: bool) -> Callable[[int], float]:
        label = "on" if execute else "off"
        return lambda i: run_timed(
            strict_build_command(workdir / f"site-{label}-{i}"), env=base_env(execute=execute)
        )

    samples = interleave({"build_on": build(True), "build_off": build(False)}, repeat, log)
    return samples, workdir / f"site-on-{repeat - 1}"


def torch_imported_by_build(site_dir: Path, *, execute: bool) -> bool:
    """Build once (untimed) in-process and tell whether torch ended up in sys.modules."""
    probe = (
        "import runpy, sys\n"
        f"sys.argv = ['mkdocs', 'build', '--strict', '--site-dir', {str(site_dir)!r}]\n"
        "try:\n"
        "    runpy.run_module('mkdocs', run_name='__main__', alter_sys=True)\n"
        "except SystemExit as exit_:\n"
        "    if exit_.code not in (None, 0):\n"
        "        raise\n"
        "print('TORCH_IMPORTED', 'torch' in sys.modules)\n"
    )
    return "TORCH_IMPORTED True" in run([PYTHON, "-c", probe], env=base_env(execute=execute))


# --- 2. import torch ------------------------------------------------------------------------


def measure_imports(repeat: int, log: Callable[[str], None]) -> dict[str, list[float]]:
    env = base_env()

    def command(code: str) -> Callable[[int], float]:
        return lambda _: run_timed([PYTHON, "-c", code], env=env)

    return interleave(
        {"python_startup": command("pass"), "import_torch_gross": command("import torch")},
        repeat,
        log,
    )


# --- 3. test suites -------------------------------------------------------------------------


SNIPPET_SUITE = ["-m", "pytest", "docs", "-q", "-p", "no:cacheprovider"]
FULL_SUITE = ["-m", "pytest", "--ignore=tests/browser", "-q", "-p", "no:cacheprovider", "-x"]


def measure_suites(
    repeat: int, suite_repeat: int, log: Callable[[str], None]
) -> dict[str, list[float]]:
    env = base_env()
    samples = interleave(
        {"snippet_suite": lambda _: run_timed([PYTHON, *SNIPPET_SUITE], env=env)}, repeat, log
    )
    samples |= interleave(
        {"full_suite": lambda _: run_timed([PYTHON, *FULL_SUITE], env=env)}, suite_repeat, log
    )
    return samples


# --- 4. rebuild time in mkdocs serve --------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class ServeLog:
    """The lines a running `mkdocs serve` printed, each stamped with perf_counter on arrival."""

    lines: queue.Queue[tuple[float, str]] = field(default_factory=queue.Queue)
    history: list[str] = field(default_factory=list)

    def pump(self, stream: Any) -> None:
        for line in stream:
            self.lines.put((time.perf_counter(), line.rstrip()))

    def wait_for(self, needle: str, timeout: float = SERVE_TIMEOUT) -> tuple[float, str]:
        """The first line from now on containing `needle` (arrival time, text)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                stamp, line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.history.append(line)
            if "ERROR" in line or "Aborted with" in line:
                raise BenchError(f"mkdocs serve failed: {line}\n" + "\n".join(self.history[-30:]))
            if needle in line:
                return stamp, line
        raise BenchError(
            f"no {needle!r} from mkdocs serve within {timeout:.0f} s:\n"
            + "\n".join(self.history[-30:])
        )


@contextlib.contextmanager
def mkdocs_serve(site_copy: Path) -> Iterator[tuple[str, ServeLog]]:
    """Run `mkdocs serve` on the copy until it serves; always stop it afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "mkdocs", "serve", "--dev-addr", f"{HOST}:{port}"],
        cwd=site_copy,
        env=base_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, so we can stop exactly it
    )
    log = ServeLog()
    threading.Thread(target=log.pump, args=(process.stdout,), daemon=True).start()
    try:
        log.wait_for("Serving on")
        url = f"http://{HOST}:{port}/"
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()
        yield url, log
    finally:
        stop_process_group(process)


def stop_process_group(process: subprocess.Popen[str]) -> None:
    """SIGINT (mkdocs shuts down and removes its temp site), then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def measure_serve_rebuilds(
    repeat: int, workdir: Path, log: Callable[[str], None]
) -> dict[str, list[float]]:
    """Append a comment to one article of a copy, time until serve has rebuilt, N times."""
    site_copy = copy_site_sources(ROOT, workdir / "serve-copy")
    page = site_copy / EDITED_PAGE
    samples: dict[str, list[float]] = {"serve_detect": [], "serve_rebuild": [], "serve_build": []}
    with mkdocs_serve(site_copy) as (_, serve_log):
        for i in range(repeat):
            # Settle, then edit at a phase of the watcher's polling period spread evenly over
            # the repetitions: the detection delay is then sampled fairly, not always ~0 or ~max.
            time.sleep(1.0 + POLLING_INTERVAL * i / repeat)
            start = time.perf_counter()
            with page.open("a", encoding="utf-8") as handle:
                handle.write(f"\n<!-- bench {i} -->\n")
            # Not "Documentation built in": mkdocs drops a build-log line that repeats an
            # earlier one word for word (DuplicateFilter), so equal durations go unlogged.
            detected, _ = serve_log.wait_for("Detected file changes")
            building, _ = serve_log.wait_for("Building documentation...")
            reloaded, _ = serve_log.wait_for("Reloading browsers")
            samples["serve_detect"].append(detected - start)
            samples["serve_rebuild"].append(reloaded - start)
            samples["serve_build"].append(reloaded - building)
            log(
                f"  serve rebuild #{i + 1}: {samples['serve_rebuild'][-1]:.2f} s "
                f"(detected after {samples['serve_detect'][-1]:.2f} s, "
                f"build {samples['serve_build'][-1]:.2f} s)"
            )
    return samples


# --- 5. page weight -------------------------------------------------------------------------


@dataclass
class Resource:
    url: str
    kind: str  # Playwright's resource type: document, stylesheet, script, font, fetch, ...
    bytes: int  # the body as served (http.server does not compress)
    gzip_bytes: int  # the body gzipped at level 6: an estimate for a compressing host


@dataclass
class PageWeight:
    page: str
    total_bytes: int
    total_gzip_bytes: int
    by_kind: dict[str, int]
    resources: list[Resource]
    blocked_off_origin: list[str]

    @property
    def under_budget(self) -> bool:
        return self.total_bytes < PAGE_BUDGET_BYTES

    def top(self, n: int = 5) -> list[Resource]:
        return sorted(self.resources, key=lambda r: r.bytes, reverse=True)[:n]


def content_pages(site: Path) -> list[str]:
    """URL paths of the built pages: every *.html but 404.html and those under assets/."""
    pages = []
    for html in sorted(site.rglob("*.html")):
        relative = html.relative_to(site)
        if relative.parts[0] == "assets" or relative.name == "404.html":
            continue
        pages.append(relative.as_posix().removesuffix("index.html"))
    return pages


def measure_page_weights(site: Path, log: Callable[[str], None]) -> list[PageWeight]:
    """Load each page once, uncached, in headless Chromium; sum every response body."""
    from playwright.sync_api import sync_playwright  # only this benchmark needs it

    weights = []
    with serving(site) as base, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=list(CHROMIUM_ARGS)
        )
        try:
            for page_path in content_pages(site):
                weights.append(weigh_page(browser, base, page_path))
                log(f"  {weights[-1].page}: {weights[-1].total_bytes / 1000:.1f} KB")
        finally:
            browser.close()
    return weights


def weigh_page(browser: Any, base: str, page_path: str) -> PageWeight:
    context = browser.new_context(viewport={"width": 1280, "height": 800})  # empty cache
    responses: list[Any] = []
    blocked: list[str] = []

    def block(route: Any) -> None:  # a reader offline: nothing leaves 127.0.0.1
        blocked.append(route.request.url)
        route.abort()

    context.route(lambda url: not url.startswith(base), block)
    context.on("response", lambda r: responses.append(r))  # context-level: workers' too
    try:
        page = context.new_page()
        page.goto(base + page_path, wait_until="networkidle", timeout=60_000)
        resources = [to_resource(r, base) for r in responses]
    finally:
        context.close()
    by_kind: dict[str, int] = {}
    for resource in resources:
        by_kind[resource.kind] = by_kind.get(resource.kind, 0) + resource.bytes
    total = sum(r.bytes for r in resources)
    total_gzip = sum(r.gzip_bytes for r in resources)
    return PageWeight(page_path or "(home)", total, total_gzip, by_kind, resources, blocked)


def to_resource(response: Any, base: str) -> Resource:
    try:
        body = response.body()
    except Exception:  # redirects and aborted responses have no body
        body = b""
    url = response.url.removeprefix(base) or "(home)"
    gzipped = len(gzip.compress(body, compresslevel=6)) if body else 0
    return Resource(url, response.request.resource_type, len(body), gzipped)


# --- summary --------------------------------------------------------------------------------


@dataclass
class Target:
    name: str
    passed: bool | None  # None: not measured in this run
    detail: str

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "SKIP"}[self.passed]


def medians(samples: dict[str, list[float]]) -> dict[str, float]:
    meds = {name: statistics.median(values) for name, values in samples.items() if values}
    if "import_torch_gross" in meds and "python_startup" in meds:
        meds["import_torch"] = meds["import_torch_gross"] - meds["python_startup"]
    if "build_on" in meds and "build_off" in meds:
        meds["execution_cost"] = meds["build_on"] - meds["build_off"]
    return meds


def ratios(meds: dict[str, float]) -> dict[str, float]:
    """The ratios the targets are about, for whichever medians are present."""
    pairs = {
        "execution_cost / import_torch": ("execution_cost", "import_torch"),
        "execution_cost / import_torch_gross": ("execution_cost", "import_torch_gross"),
        "build_on / build_off": ("build_on", "build_off"),
        "full_suite / build_on": ("full_suite", "build_on"),
        "snippet_suite / build_on": ("snippet_suite", "build_on"),
        "serve_rebuild / build_on": ("serve_rebuild", "build_on"),
    }
    return {
        label: meds[top] / meds[bottom]
        for label, (top, bottom) in pairs.items()
        if top in meds and bottom in meds and meds[bottom] > 0
    }


def targets(meds: dict[str, float], pages: list[PageWeight] | None) -> list[Target]:
    found = []
    if "execution_cost" in meds and "import_torch" in meds:
        limit = EXECUTION_COST_FACTOR * meds["import_torch"]
        found.append(
            Target(
                f"execution_cost <= {EXECUTION_COST_FACTOR:.2f} x import_torch",
                meds["execution_cost"] <= limit,
                f"{meds['execution_cost']:.2f} s vs limit {limit:.2f} s",
            )
        )
    else:
        found.append(Target("execution_cost <= 1.10 x import_torch", None, "not measured"))
    if "full_suite" in meds and "build_on" in meds:
        limit = SUITE_OVER_BUILD_MAX * meds["build_on"]
        found.append(
            Target(
                f"full_suite < {SUITE_OVER_BUILD_MAX:g} x build_on",
                meds["full_suite"] < limit,
                f"{meds['full_suite']:.2f} s vs limit {limit:.2f} s",
            )
        )
    else:
        found.append(Target("full_suite < 2 x build_on", None, "not measured"))
    budget = f"{PAGE_BUDGET_BYTES / 1000:.0f} KB"
    if pages:
        heaviest = max(pages, key=lambda p: p.total_bytes)
        found.append(
            Target(
                f"every page < {budget}",
                all(p.under_budget for p in pages),
                f"heaviest {heaviest.page}: {heaviest.total_bytes / 1000:.1f} KB",
            )
        )
    else:
        found.append(Target(f"every page < {budget}", None, "not measured"))
    return found


def timing_table(samples: dict[str, list[float]], meds: dict[str, float]) -> list[str]:
    lines = ["| measurement | median (s) | min | max | n |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, value in meds.items():
        values = samples.get(name)
        if values:
            spread = f"{min(values):.2f} | {max(values):.2f} | {len(values)}"
        else:
            name, spread = f"{name} (derived)", "| |"
        lines.append(f"| {name} | {value:.2f} | {spread} |")
    return lines


def ratio_table(rats: dict[str, float]) -> list[str]:
    return ["| ratio | value |", "| --- | ---: |"] + [
        f"| {label} | {value:.2f} |" for label, value in rats.items()
    ]


def page_table(pages: list[PageWeight]) -> list[str]:
    budget = f"{PAGE_BUDGET_BYTES / 1000:.0f} KB"
    lines = [
        f"| page | KB as served | KB gzipped (estimate) | under {budget} |",
        "| --- | ---: | ---: | --- |",
    ]
    for weight in pages:
        lines.append(
            f"| {weight.page} | {weight.total_bytes / 1000:.1f} "
            f"| {weight.total_gzip_bytes / 1000:.1f} | {'yes' if weight.under_budget else 'NO'} |"
        )
    for weight in pages:
        lines.append(f"\nlargest resources of {weight.page} (KB as served, gzipped):")
        lines += [
            f"  {r.bytes / 1000:8.1f} {r.gzip_bytes / 1000:8.1f}  {r.kind:<10} {r.url}"
            for r in weight.top()
        ]
        if weight.blocked_off_origin:
            lines.append(f"  blocked off-origin requests: {weight.blocked_off_origin}")
    return lines


def summary_lines(
    samples: dict[str, list[float]],
    meds: dict[str, float],
    rats: dict[str, float],
    pages: list[PageWeight] | None,
    found: list[Target],
) -> list[str]:
    lines = ["", *timing_table(samples, meds), "", *ratio_table(rats)]
    if pages:
        lines += ["", *page_table(pages)]
    lines += ["", *(f"{t.verdict} {t.name}: {t.detail}" for t in found)]
    return lines


def git(*argv: str) -> str:
    """Output of a read-only git command in the repository, or "" without git."""
    try:
        result = subprocess.run(
            ["git", *argv], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def metadata(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "torch": importlib.metadata.version("torch"),
        "mkdocs": importlib.metadata.version("mkdocs"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "repeat": args.repeat,
        "suite_repeat": args.suite_repeat,
        "benchmarks": list(args.only),
    }


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions (default 5)")
    parser.add_argument(
        "--suite-repeat", type=int, default=3, help="repetitions of the full test suite (3)"
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=BENCHMARKS,
        default=list(BENCHMARKS),
        help="run only these benchmarks (default: all)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the JSON file")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.suite_repeat < 1:
        parser.error("--repeat and --suite-repeat must be at least 1")
    return args


def log(message: str) -> None:
    print(message, flush=True)


@dataclass
class Measured:
    samples: dict[str, list[float]] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)
    pages: list[PageWeight] | None = None


def measure(args: argparse.Namespace, workdir: Path) -> Measured:
    """Every selected benchmark, in order; temporary sites and copies go in workdir."""
    out = Measured()
    site = None
    if "build" in args.only:
        log(f"strict builds, execution on/off interleaved, {args.repeat} rounds")
        build_samples, site = measure_builds(args.repeat, workdir, log)
        out.samples |= build_samples
        for execute in (True, False):
            name = f"torch imported by a build with execution {'on' if execute else 'off'}"
            probe_site = workdir / f"probe-{execute}"
            out.checks[name] = torch_imported_by_build(probe_site, execute=execute)
    if "import" in args.only:
        log(f"python -c 'pass' / 'import torch', interleaved, {args.repeat} rounds")
        out.samples |= measure_imports(args.repeat, log)
    if "suite" in args.only:
        log(f"pytest: snippets x{args.repeat}, full suite (no browser) x{args.suite_repeat}")
        out.samples |= measure_suites(args.repeat, args.suite_repeat, log)
    if "serve" in args.only:
        log(f"mkdocs serve: rebuild after editing {EDITED_PAGE}, {args.repeat} times")
        out.samples |= measure_serve_rebuilds(args.repeat, workdir, log)
    if "pages" in args.only:
        if site is None:
            site = workdir / "site-pages"
            run_timed(strict_build_command(site), env=base_env())
        log("page weight, one uncached load per page in headless Chromium")
        out.pages = measure_page_weights(site, log)
    return out


def report(args: argparse.Namespace, measured: Measured) -> dict[str, Any]:
    """Print the summary; return what goes into the JSON file."""
    meds = medians(measured.samples)
    rats = ratios(meds)
    found = targets(meds, measured.pages)
    meta = metadata(args)
    dirty = " + uncommitted changes" if meta["uncommitted_changes"] else ""
    log(
        f"\n{meta['date']}, torch {meta['torch']}, mkdocs {meta['mkdocs']}, "
        f"Python {meta['python']}, {meta['machine']}, commit {meta['commit']}{dirty}"
    )
    for line in summary_lines(measured.samples, meds, rats, measured.pages, found):
        log(line)
    for name, value in measured.checks.items():
        expected = name.endswith(" on")
        log(f"check: {name}: {value}" + ("" if value == expected else "  <-- unexpected"))
    return {
        "meta": meta,
        "checks": measured.checks,
        "samples": measured.samples,
        "medians": meds,
        "ratios": rats,
        "targets": [asdict(t) | {"verdict": t.verdict} for t in found],
        "pages": [asdict(p) | {"under_budget": p.under_budget} for p in measured.pages or []],
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="autograd-bench-") as tmp:
            measured = measure(args, Path(tmp))
    except BenchError as error:
        print(f"benchmark aborted: {error}", file=sys.stderr)
        return 1
    result = report(args, measured)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
