"""Where a build's time goes: the engine's stage record, read from `mkdocs build -v`.

The plugin logs one DEBUG record at the end of a build, seconds of wall time in the build process:
`autograd-traced stages: {"execution": 1.23, "math": 0.4, "diagrams": 0.2}`. What is left of
mkdocs' own "Documentation built in" time (which includes the plugin's torch import) is
reported as Markdown and the rest (parsing, the theme, search, writing).
"""

from __future__ import annotations

import json
import re
import statistics

from autograd_traced.build.stages import STAGES_RECORD, Stage

STAGES_RE = re.compile(re.escape(STAGES_RECORD) + r"(\{.*\})")
BUILT_IN_RE = re.compile(r"Documentation built in ([\d.]+) seconds")
STAGES = tuple(Stage)
REST = "markdown and the rest"


def build_stages(log: str) -> dict[str, float] | None:
    """The stages of one build with REST derived; None when the build did not log them."""
    stages, built_in = STAGES_RE.search(log), BUILT_IN_RE.search(log)
    if stages is None or built_in is None:
        return None
    seconds = {name: float(value) for name, value in json.loads(stages[1]).items()}
    seconds[REST] = float(built_in[1]) - sum(seconds.values())
    return seconds


def median_stages(logs: list[str]) -> dict[str, float | None]:
    """Each stage's median over the builds that logged it; None (n/a) where none did."""
    builds = [stages for log in logs if (stages := build_stages(log)) is not None]
    names = dict.fromkeys([*STAGES, *(name for b in builds for name in b if name != REST), REST])
    return {name: median_or_none([b[name] for b in builds if name in b]) for name in names}


def median_or_none(values: list[float]) -> float | None:
    return statistics.median(values) if values else None
