"""Lighthouse on a served page, as a phone (its default): the score of each category, 0-100.

npm's `lighthouse@12.2.3` (13 needs a newer Node), in Debian's Chromium with the flags that
keep it offline. `nox -s browser` installs it and says where (LIGHTHOUSE); the browser tests
hold accessibility, best practices and SEO at 100, and `python -m benchmarks --only
lighthouse` measures performance, which depends on the machine's load (no test asserts it).
Standard library only: noxfile.py imports it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograd_traced.tools.local_site import CHROMIUM, CHROMIUM_ARGS

VERSION = "12.2.3"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")


def command() -> str | None:
    """The lighthouse executable: LIGHTHOUSE, else one on PATH; None when there is none."""
    named = os.environ.get("LIGHTHOUSE") or "lighthouse"
    return named if Path(named).is_file() else shutil.which(named)


@dataclass(frozen=True)
class Report:
    """One Lighthouse run of one page."""

    scores: dict[str, int]  # category -> 0-100
    failed: dict[str, list[str]]  # category -> "audit-id: title" of each weighted audit not passed


class LighthouseError(RuntimeError):
    """Lighthouse ran but could not score the page: its own runtime error, or a category left
    without a score (null) because one of its audits errored."""


def audit(url: str, *, timeout: float = 180, attempts: int = 2) -> Report:
    """Lighthouse's report on `url`, run again (up to `attempts` runs in all) when Lighthouse
    itself errors: a run under load can leave a category unscored, which says nothing of the
    page. RuntimeError when it fails to run; LighthouseError, naming each run's error, when
    no run could score the page."""
    errors: list[str] = []
    for _ in range(attempts):
        try:
            return _audit_once(url, timeout=timeout)
        except LighthouseError as error:
            errors.append(str(error))
    raise LighthouseError(f"lighthouse {url}: no run scored the page:\n" + "\n".join(errors))


def _audit_once(url: str, *, timeout: float) -> Report:
    executable = command()
    if executable is None:
        raise RuntimeError("lighthouse not found: set LIGHTHOUSE, or run `nox -s browser`")
    with tempfile.TemporaryDirectory(prefix="autograd-traced-lighthouse-") as folder:
        report_path = Path(folder) / "report.json"
        done = subprocess.run(
            [
                executable,
                url,
                "--quiet",
                "--output=json",
                f"--output-path={report_path}",
                f"--only-categories={','.join(CATEGORIES)}",
                f"--chrome-flags={' '.join(('--headless=new', *CHROMIUM_ARGS))}",
            ],
            env={**os.environ, "CHROME_PATH": CHROMIUM},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0 or not report_path.is_file():
            raise RuntimeError(f"lighthouse {url} exited {done.returncode}:\n{done.stderr[-2000:]}")
        report = json.loads(report_path.read_text())
    if problem := report.get("runtimeError"):
        raise LighthouseError(f"runtime error: {problem.get('message', problem)}")
    audits = report["audits"]
    if unscored := [name for name in CATEGORIES if report["categories"][name]["score"] is None]:
        raise LighthouseError(
            f"no score for {', '.join(unscored)}: "
            + "; ".join(
                f"{ref['id']}: {audits[ref['id']].get('errorMessage', 'no message')}"
                for name in unscored
                for ref in report["categories"][name]["auditRefs"]
                if audits[ref["id"]].get("scoreDisplayMode") == "error"
            )
        )
    return Report(
        scores={name: round(report["categories"][name]["score"] * 100) for name in CATEGORIES},
        failed={
            name: [
                f"{ref['id']}: {audits[ref['id']]['title']}"
                for ref in report["categories"][name]["auditRefs"]
                if ref["weight"] and audits[ref["id"]]["score"] not in (None, 1)
            ]
            for name in CATEGORIES
        },
    )
