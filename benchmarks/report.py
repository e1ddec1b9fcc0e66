"""The printed summary (Markdown tables, verdict lines) and the JSON record of a run."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import platform
import subprocess
from typing import Any

from benchmarks.harness import ROOT, Samples
from benchmarks.memory import TreeMemory
from benchmarks.targets import MIB, Target


def timing_table(samples: Samples, meds: dict[str, float]) -> list[str]:
    lines = ["| measurement | median (s) | min | max | n |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, value in meds.items():
        if values := samples.get(name):
            lines.append(
                f"| {name} | {value:.2f} | {min(values):.2f} | {max(values):.2f} | {len(values)} |"
            )
        else:
            lines.append(f"| {name} (derived) | {value:.2f} | | | |")
    return lines


def ratio_table(rats: dict[str, float]) -> list[str]:
    return ["| ratio | value |", "| --- | ---: |"] + [
        f"| {label} | {value:.2f} |" for label, value in rats.items()
    ]


def stage_table(title: str, stages: dict[str, float | None]) -> list[str]:
    """Median seconds per stage; n/a when the builds did not log their stages."""
    lines = [f"| stage, {title} | median (s) |", "| --- | ---: |"]
    return lines + [
        f"| {name} | {'n/a' if seconds is None else f'{seconds:.2f}'} |"
        for name, seconds in stages.items()
    ]


def memory_table(memory: list[TreeMemory]) -> list[str]:
    lines = [
        "| after rebuild | PSS (MiB) | RSS summed (MiB) | processes |",
        "| ---: | ---: | ---: | ---: |",
    ]
    return lines + [
        f"| {i} | {m.pss_bytes / MIB:.1f} | {m.rss_bytes / MIB:.1f} | {m.processes} |"
        for i, m in enumerate(memory)
    ]


def verdict_lines(found: list[Target]) -> list[str]:
    return [f"{t.verdict} {t.name}: {t.detail}" for t in found]


def git(*argv: str) -> str:
    """Output of a read-only git command in the repository, or "" without git."""
    try:
        result = subprocess.run(
            ["git", *argv], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return ""
    return result.stdout.strip() if result.returncode == 0 else ""


def metadata(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "torch": importlib.metadata.version("torch"),
        "mkdocs": importlib.metadata.version("mkdocs"),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load_average": os.getloadavg(),
        **options,
    }


def meta_line(meta: dict[str, Any]) -> str:
    dirty = " + uncommitted changes" if meta["uncommitted_changes"] else ""
    load = ", ".join(f"{x:.1f}" for x in meta["load_average"])
    return (
        f"{meta['date']}, torch {meta['torch']}, mkdocs {meta['mkdocs']}, Python {meta['python']},"
        f" {meta['machine']} (load {load}), commit {meta['commit']}{dirty}"
    )
