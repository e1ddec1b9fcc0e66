"""Where a build's time goes: seconds of wall time per stage, which the plugin logs once a
build (`autograd-traced stages: {...}`, at debug level) for the benchmark to read."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from enum import StrEnum

STAGES_RECORD = "autograd-traced stages: "  # what the log line starts with


class Stage(StrEnum):
    EXECUTION = "execution"  # waiting for the page's run
    MATH = "math"  # KaTeX
    DIAGRAMS = "diagrams"  # hand-made diagrams, drawn with Graphviz


class Stages:
    """One build's stages; pages run in threads, so adding up is locked."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    @contextmanager
    def timed(self, stage: Stage) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                spent = self.seconds.get(stage, 0.0) + time.perf_counter() - start
                self.seconds[stage] = round(spent, 4)

    @staticmethod
    def timing(stages: Stages | None, stage: Stage) -> AbstractContextManager[None]:
        """`stages.timed(stage)`, or nothing when no build is timing (a test's page run)."""
        return nullcontext() if stages is None else stages.timed(stage)

    def record(self) -> str:
        return STAGES_RECORD + json.dumps(self.seconds)
