"""Benchmark the site's build and serve against its targets: `python -m benchmarks`.

Prints medians, ratios, where build time goes, serve memory and PASS/FAIL lines for the
targets, and writes everything to a JSON file. Exits 0 even when a target fails (a benchmark,
not a test); exits 1 when a measured command fails (a timing of a broken build means nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import builds, growth, imports, lighthouse, report, serve, stages, suites, targets
from benchmarks.harness import ROOT, BenchError, Samples, log
from benchmarks.memory import TreeMemory
from benchmarks.scaled_site import make_scaled_site, read_config, site_articles

DEFAULT_OUTPUT = ROOT / "benchmarks" / "results" / "latest.json"
MEASUREMENTS = ("imports", "builds", "scale", "warm", "growth", "serve", "suites", "lighthouse")
# The real site's articles (the nav, less the home page): its copy for serve has no more.
SITE_ARTICLE_PAGES = len(site_articles(read_config(ROOT / "mkdocs.yml")))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeat", type=int, default=5, help="rounds of each build and import (5)")
    parser.add_argument(
        "--pages", type=int, default=40, help="article pages of the scaled copy (40)"
    )
    parser.add_argument(
        "--growth-pages",
        type=int,
        nargs="+",
        default=list(growth.DEFAULT_SIZES),
        help="article pages of each copy `growth` builds once each way (5 40 200)",
    )
    parser.add_argument(
        "--serve-rounds", type=int, default=10, help="snippet edits per served site (10)"
    )
    parser.add_argument(
        "--suite-repeat", type=int, default=3, help="runs of the full test suite (3)"
    )
    parser.add_argument(
        "--only", nargs="+", choices=MEASUREMENTS, default=list(MEASUREMENTS), help="run only these"
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the JSON file")
    args = parser.parse_args(argv)
    if min(args.repeat, args.serve_rounds, args.suite_repeat) < 1:
        parser.error("--repeat, --serve-rounds and --suite-repeat must be at least 1")
    if min(args.pages, *args.growth_pages) < SITE_ARTICLE_PAGES:
        parser.error(
            f"--pages and --growth-pages must be at least {SITE_ARTICLE_PAGES}, "
            "the real site's articles"
        )
    return args


@dataclass
class Measured:
    samples: Samples = field(default_factory=dict)
    build_logs: dict[str, list[str]] = field(default_factory=dict)  # for the stage report
    memory: list[TreeMemory] = field(default_factory=list)
    growth: list[growth.Size] = field(default_factory=list)
    checks: dict[str, tuple[bool, bool]] = field(default_factory=dict)  # (found, expected)


def measure(args: argparse.Namespace, workdir: Path) -> Measured:
    """Every selected measurement, in order; temporary sites and copies go in workdir."""
    out = Measured()
    if "imports" in args.only:
        log(f"python -c 'pass' / 'import torch', interleaved, {args.repeat} rounds")
        out.samples |= imports.measure_imports(args.repeat)
    if "builds" in args.only:
        log(f"the site: strict builds, execution on/off interleaved, {args.repeat} rounds")
        samples, out.build_logs["the site"] = builds.measure_execution(args.repeat, workdir)
        out.samples |= samples
        out.checks = builds.torch_import_checks(workdir)
    scaled = make_scaled_site(ROOT, workdir / "scaled", args.pages)
    if "scale" in args.only:
        log(f"{args.pages} article pages: strict / plain Material builds, {args.repeat} rounds")
        samples, out.build_logs[f"{args.pages} article pages"] = builds.measure_scale(
            scaled, args.repeat, workdir
        )
        out.samples |= samples
    if "warm" in args.only:
        log(f"{args.pages} article pages, results cache full: unchanged / one edit / plain")
        samples, logs = builds.measure_warm(scaled, args.repeat, workdir)
        for side, side_logs in logs.items():
            out.build_logs[f"{args.pages} article pages, warm, {side}"] = side_logs
        out.samples |= samples
    if "growth" in args.only:
        log(f"growth: cold, warm, one edit and plain builds at {args.growth_pages} article pages")
        samples, out.growth = growth.measure_growth(tuple(args.growth_pages), workdir)
        out.samples |= samples
    if "serve" in args.only:
        site = make_scaled_site(ROOT, workdir / "site", SITE_ARTICLE_PAGES)
        log(f"mkdocs serve, 3 and {args.pages + 1} pages: {args.serve_rounds} snippet edits")
        samples, out.memory = serve.measure_serve(site, scaled, args.serve_rounds)
        out.samples |= samples
    if "suites" in args.only:
        log(f"pytest: snippets x{args.repeat}, full suite (no browser) x{args.suite_repeat}")
        out.samples |= suites.measure_suites(args.repeat, args.suite_repeat)
    if "lighthouse" in args.only:
        log(f"Lighthouse, mobile, every page: {args.repeat} rounds")
        out.samples |= lighthouse.measure_lighthouse(args.repeat, workdir)
    return out


def summarize(args: argparse.Namespace, measured: Measured) -> dict[str, Any]:
    """Print the summary; return what goes into the JSON file."""
    meds = targets.medians(measured.samples)
    rats = targets.ratios(meds)
    found = targets.targets(measured.samples, measured.memory, args.pages)
    stage_medians = {
        title: stages.median_stages(logs) for title, logs in measured.build_logs.items()
    }
    meta = report.metadata({key: value for key, value in vars(args).items() if key != "output"})
    lines = ["", report.meta_line(meta), "", *report.timing_table(measured.samples, meds)]
    lines += ["", *report.ratio_table(rats)]
    for title, medians in stage_medians.items():
        lines += ["", *report.stage_table(title, medians)]
    if measured.memory:
        lines += ["", f"serve, {args.pages + 1} pages:", *report.memory_table(measured.memory)]
    if measured.growth:
        lines += ["", "growth, one build of each:", *growth.growth_table(measured.growth)]
    lines += ["", *report.verdict_lines(found)]
    for name, (value, expected) in measured.checks.items():
        lines.append(f"check: {name}: {value}" + ("" if value == expected else "  <-- unexpected"))
    for line in lines:
        log(line)
    return {
        "meta": meta,
        "checks": {name: found for name, (found, _) in measured.checks.items()},
        "samples": measured.samples,
        "medians": meds,
        "ratios": rats,
        "stages": stage_medians,
        "serve_memory": [asdict(m) for m in measured.memory],
        "growth": growth.as_json(measured.growth),
        "targets": [asdict(t) | {"verdict": t.verdict} for t in found],
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="autograd-bench-") as tmp:
            measured = measure(args, Path(tmp))
    except BenchError as error:
        print(f"benchmark aborted: {error}", file=sys.stderr)
        return 1
    result = summarize(args, measured)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    log(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
