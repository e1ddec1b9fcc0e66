"""The test suites, timed as whole pytest processes from the repository root."""

from __future__ import annotations

from benchmarks.harness import PYTHON, Samples, base_env, interleave, run_timed

SNIPPET_SUITE = ["-m", "pytest", "docs", "-q", "-p", "no:cacheprovider"]
FULL_SUITE = ["-m", "pytest", "--ignore=tests/browser", "-q", "-p", "no:cacheprovider", "-x"]


def measure_suites(repeat: int, suite_repeat: int) -> Samples:
    """The snippet tests (Sybil) `repeat` times, the full suite without the browser fewer."""
    env = base_env()
    samples = interleave(
        {"snippet_suite": lambda _: run_timed([PYTHON, *SNIPPET_SUITE], env=env).wall}, repeat
    )
    return samples | interleave(
        {"full_suite": lambda _: run_timed([PYTHON, *FULL_SUITE], env=env).wall}, suite_repeat
    )
