"""What runs inside a page's own process: its snippets and recorded graphs, in page order,
in one namespace, from fixed seeds. Everything it returns is plain data (strings), sent back
to the build or the test that asked.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from autograd_traced.drawing.player import player_id, render_player
from autograd_traced.drawing.svg import Draw, dot_svg, figure
from autograd_traced.fences.registry import KINDS
from autograd_traced.running.plan import FenceResult, PagePlan, PlannedFence
from autograd_traced.running.snippets import (
    Snippet,
    SnippetError,
    run_snippet,
    stored_runs,
    transcript,
)

Report = Callable[[str, float], None]
Ask = Callable[[str, object], object]
SEED = 0


def execute_page(plan: PagePlan, *, report: Report, ask: Ask | None = None) -> list[FenceResult]:
    """The result of each fence that shares the page's namespace, in page order.

    After a failure the later ones are not run: they would run on half-made state. `ask`
    reaches the build's process: it draws the graphs, once per DOT source for every page.
    """
    draw: Draw = dot_svg if ask is None else (lambda source: str(ask("dot", source)))
    if plan.settings.execute:  # in a process of the page's own (with execution off, not)
        os.chdir(plan.root)  # relative paths mean the same in the build, serve and tests
        _seed_everything()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    results: list[FenceResult] = []
    failed = ""
    for planned in plan.fences:
        fence = planned.fence
        if not KINDS[fence.language].stateful:
            continue
        result = FenceResult(planned.where, fence.language, fence.options)
        if planned.problem:
            results.append(replace(result, error=planned.problem))
            failed = failed or planned.where
            continue
        if failed:
            results.append(replace(result, skipped=f"not run: {failed} failed before it"))
            continue
        run = _run_pycon if fence.language == "pycon" else _run_graph
        try:
            results.append(run(planned, result, namespace, plan, report, draw))
        except SnippetError as error:
            results.append(replace(result, error=str(error)))
            failed = planned.where
        except BaseException as error:  # a bug in drawing: still this fence's failure
            import traceback

            message = "".join(traceback.format_exception(error))
            results.append(replace(result, error=f"{planned.where}: {fence.label}: {message}"))
            failed = planned.where
    return results


def crashed(plan: PagePlan, where: str, message: str) -> list[FenceResult]:
    """Results for a page whose process ended (or was stopped) while running `where`."""
    results = []
    for planned in plan.fences:
        if not KINDS[planned.fence.language].stateful:
            continue
        result = FenceResult(planned.where, planned.fence.language, planned.fence.options)
        if where.endswith(f"(used by {planned.where})") or where == planned.where:
            results.append(replace(result, error=f"{where}: {message}"))
        else:
            results.append(replace(result, skipped=f"not shown: {where} did not finish"))
    if not any(result.failed for result in results):  # it died between fences
        results[0] = replace(results[0], skipped="", error=f"{where}: {message}")
    return results


def preload() -> None:
    """What the fork server imports before it serves: torch (out of the collector's way) and
    what every page's process needs, which each child then has instead of importing it."""
    from autograd_traced.running.torch_import import import_torch

    import_torch()
    import torch.nn.functional  # noqa: F401  (the program's own import)

    import autograd_traced.drawing.graph
    import autograd_traced.drawing.tracer  # noqa: F401


def torch_version(*, report: Report, ask: Ask | None = None) -> str:
    import torch

    return str(torch.__version__)  # a str subclass of torch's: unpickled, it imports torch


def _seed_everything() -> None:
    import torch

    random.seed(SEED)
    torch.manual_seed(SEED)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(SEED)


def _run_pycon(
    planned: PlannedFence,
    result: FenceResult,
    namespace: dict[str, Any],
    plan: PagePlan,
    report: Report,
    draw: Draw,
) -> FenceResult:
    path = planned.fence.options["file"]
    snippet = Snippet.parse(path, planned.source, page=planned.where)
    if not plan.settings.execute:
        runs = stored_runs(snippet)
        return replace(result, console=transcript(runs), title=path, runs=tuple(runs))
    recorder = None
    if planned.fence.options.get("trace") == "on":
        from autograd_traced.drawing.tracer import Recorder  # imports torch

        recorder = Recorder(player_id(path), title=path, draw=draw)
        recorder.start(namespace)
    runs = run_snippet(
        snippet,
        namespace,
        page=planned.where,
        observe=recorder.observe if recorder else None,
        before=lambda where: report(where, planned.timeout),
        update=plan.settings.update,
    )
    result = replace(result, console=transcript(runs), title=path, runs=tuple(runs))
    if recorder is None:
        return result
    return replace(
        result, html=render_player(recorder.trace, player_id=player_id(path), title=path)
    )


def _run_graph(
    planned: PlannedFence,
    result: FenceResult,
    namespace: dict[str, Any],
    plan: PagePlan,
    report: Report,
    draw: Draw,
) -> FenceResult:
    if not plan.settings.execute:
        return replace(result, html="<p><em>(graph not drawn: execution is off)</em></p>")
    import torch

    from autograd_traced.drawing.graph import graph_svg

    options = planned.fence.options
    name = options["of"]
    report(f"{planned.where} (autograd-graph of={name})", planned.timeout)
    root = namespace.get(name)
    if not isinstance(root, torch.Tensor) or root.grad_fn is None:
        raise SnippetError(f"{planned.where}: {name!r} is not a tensor with a recorded graph")
    direction = options.get("direction", "backward")
    alt = options.get("alt") or f"The {direction} graph PyTorch recorded for {name}"
    svg = graph_svg(root, namespace, alt=alt, direction=direction, draw=draw)
    return replace(result, html=figure(svg))
