"""What kind of build this process is doing, and where its time goes.

MkDocs loads the hook module afresh for every `mkdocs serve` rebuild, so what must outlive
one build (whether we are serving, the stage timings the benchmark reads) lives here.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

EXECUTE_VAR = "AUTOGRAD_TRACED_EXECUTE"

serving = False  # `mkdocs serve`: show failures on the page instead of stopping the build
stages: dict[str, float] = {}  # seconds of wall time per stage of the current build
_stages_lock = threading.Lock()


def executing() -> bool:
    """False when AUTOGRAD_TRACED_EXECUTE=0: pages show stored transcripts, torch is not loaded.

    Only the benchmark uses this, to measure what running the snippets costs a build.
    """
    return os.environ.get(EXECUTE_VAR, "1") != "0"


@contextmanager
def timed(stage: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        with _stages_lock:
            stages[stage] = round(stages.get(stage, 0.0) + time.perf_counter() - start, 4)


# Outside the "mkdocs" logger on purpose: strict mode counts that logger's warnings and errors,
# and a counted one would stop `mkdocs serve` from serving the page that shows the failure.
_writer_log = logging.getLogger("autograd_traced.serve")
_writer_log.propagate = False
if not _writer_log.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    _writer_log.addHandler(_handler)


def report_to_writer(message: str, *, on_page: bool = True) -> None:
    """Under `mkdocs serve`: say what failed in the terminal (and whether the page shows it)."""
    shown = "shown on the page; " if on_page else ""
    _writer_log.error("%s\n(%sfix it and save: the site rebuilds)", message, shown)
