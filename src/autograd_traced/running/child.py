"""What runs inside a page's own process: its snippets and recorded graphs, in page order,
in one namespace, from fixed seeds. It reports what ran and printed as plain JSON data
(`FenceReport`); the build's or the test's own process decides the verdict from it
(`verdict.decide`), so nothing a snippet does here can make a page pass.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from autograd_traced.drawing.player import player_id, render_player
from autograd_traced.drawing.svg import Draw, dot_svg, figure
from autograd_traced.fences.registry import KINDS
from autograd_traced.running import processes
from autograd_traced.running.plan import PagePlan, PlannedFence
from autograd_traced.running.snippets import (
    TRACEBACK_HEADER,
    Executed,
    Snippet,
    SnippetError,
    run_snippet,
)

Report = Callable[[str, float], None]
Ask = Callable[[str, object], object]
SEED = 0


@dataclass
class FenceReport:
    """What one fence did in the page's process, as JSON-ready data."""

    executed: list[Executed] = field(default_factory=list)  # a snippet's examples, in order
    html: str = ""  # a player or a graph, drawn here
    error: str = ""  # what went wrong here (a failure can only make the page fail)
    skipped: str = ""

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> FenceReport:
        """What a page's process sent, if it has exactly this shape (else ValueError): read
        in the build's process, which trusts nothing else of it."""
        texts = ("html", "error", "skipped")
        if (
            isinstance(data, dict)
            and data.keys() == {"executed", *texts}
            and all(isinstance(data[key], str) for key in texts)
            and isinstance(data["executed"], list)
        ):
            executed = [Executed.from_json(item) for item in data["executed"]]
            return cls(executed, *(data[key] for key in texts))
        raise ValueError(f"not a fence report: {data!r:.200}")


def execute_page(
    plan: PagePlan,
    workdir: str,
    output: str = "",
    *,
    report: Report,
    ask: Ask | None = None,
) -> list[dict[str, object]]:
    """A report for each fence that shares the page's namespace, in page order.

    After a failure the later ones are not run: they would run on half-made state. `ask`
    reaches the build's process: it draws the graphs, once per DOT source for every page.
    What the process writes outside the transcripts goes to the file `output`.
    """
    draw: Draw = dot_svg if ask is None else (lambda source: str(ask("dot", source)))
    if workdir:  # in a process of the page's own (with execution off, or nothing to run, not)
        # A folder of the page's own (removed after it) and the repository read-only: what
        # a snippet writes reaches no source, no other page and no serve rebuild.
        os.chdir(workdir)
        processes.send_output_to(output)
        processes.read_only(plan.root)
        processes.limit_memory(plan.settings.memory)
        random.seed(SEED)  # Python reseeds its own generator in every forked process
    namespace: dict[str, Any] = {"__name__": "__main__"}
    reports: list[dict[str, object]] = []
    failed = ""
    for planned in plan.fences:
        fence = planned.fence
        if not KINDS[fence.language].stateful:
            continue
        fence_report = FenceReport()
        reports.append(fence_report.to_json())
        if planned.problem:  # the build reports it; nothing runs after it
            failed = failed or planned.where
            continue
        if failed:
            fence_report.skipped = f"not run: {failed} failed before it"
        else:
            run = _run_pycon if fence.language == "pycon" else _run_graph
            try:
                run(planned, fence_report, namespace, plan, report, draw)
            except SnippetError as error:
                fence_report.error = str(error)
            except BaseException as error:  # a bug in drawing: still this fence's failure
                import traceback

                message = "".join(traceback.format_exception(error))
                fence_report.error = f"{planned.where}: {fence.label}: {message}"
            failed = planned.where if fence_report.error else ""
        reports[-1] = fence_report.to_json()
    return reports


def preload() -> None:
    """What the fork server imports before it serves: torch and what every page's process
    needs, which each child then has instead of importing it; all of it out of the
    collector's way (`long_lived_imports`): a collection in a child walks every object it may
    reach, and writing the collector's marks into them copies their pages (copy-on-write)."""
    from autograd_traced.running.torch_import import import_torch, long_lived_imports

    import_torch()
    with long_lived_imports():
        # What torch imports the first time a gradient is given explicitly (`grad_outputs=`,
        # `backward(gradient)`, `torch.autograd.grad(y, x, v)`: `_make_grads` checks its
        # shape): sympy, 0.3-0.5 s, that would otherwise be paid again by every page that does.
        import torch.fx.experimental.symbolic_shapes
        import torch.nn.functional  # noqa: F401  (the program's own import)

        import autograd_traced.drawing.graph
        import autograd_traced.drawing.tracer  # noqa: F401

        for name in FIRST_USE_IMPORTS:
            with contextlib.suppress(ImportError):  # another release may not have it
                importlib.import_module(name)
    seed_everything()


# Modules a page's process imported on its own, measured (sys.modules at the end of each run
# against the server's): each import cost every page again.
FIRST_USE_IMPORTS = (
    "numpy.random",  # seed_everything: numpy loads it on first use
    "torch._subclasses.schema_check_mode",  # printing a tensor
    "torch.profiler._cupti_monitor",  # torch.autograd.profiler.record_function
)


def preload_training() -> None:
    """What the server of pages that train imports too: an optimizer's first step imports
    torch._dynamo (about 800 modules, nearly as long as torch), which they then share."""
    from autograd_traced.running.torch_import import long_lived_imports

    with long_lived_imports():
        import torch._dynamo  # noqa: F401
    seed_everything()  # again: nothing the import drew may show in a page


def torch_version(*, report: Report, ask: Ask | None = None) -> str:
    import torch

    return str(torch.__version__)  # a str subclass of torch's: unpickled, it imports torch


def seed_everything() -> None:
    """torch's and numpy's generators at SEED: called by the server once it has imported
    what it preloads, and by nothing after, so each page's process (a fork of it) starts
    from exactly these states, whichever pages ran before. (Python's own generator is
    reseeded by every fork: each page's process seeds it.) Seeding torch in each page's
    process instead cost each page 8 ms: it queues a seed for every accelerator it knows,
    recording the stack each time."""
    import torch

    torch.manual_seed(SEED)
    try:
        import numpy
    except ImportError:
        return
    numpy.random.seed(SEED)


def _run_pycon(
    planned: PlannedFence,
    fence_report: FenceReport,
    namespace: dict[str, Any],
    plan: PagePlan,
    report: Report,
    draw: Draw,
) -> None:
    path = planned.fence.options["file"]
    snippet = Snippet.parse(path, planned.source, page=planned.where)
    if not plan.settings.execute:  # the stored transcript, as if it had printed it
        fence_report.executed = [_as_stored(example) for example in snippet.examples]
        return
    recorder = None
    if planned.fence.options.get("trace") == "on":
        from autograd_traced.drawing.tracer import Recorder  # imports torch

        recorder = Recorder(player_id(path), title=path, draw=draw)
        recorder.start(namespace)
    run_snippet(
        snippet,
        namespace,
        page=planned.where,
        observe=recorder.observe if recorder else None,
        before=lambda where: report(where, planned.timeout),
        watch=recorder.watch if recorder else None,
        update=plan.settings.update,
        executed=fence_report.executed,
    )
    if recorder is not None:
        fence_report.html = render_player(recorder.trace, player_id=player_id(path), title=path)


def _as_stored(example: Any) -> Executed:
    if example.exc_msg is None:
        return Executed(example.want)
    return Executed(example.want.split(TRACEBACK_HEADER)[0], example.exc_msg)


def _run_graph(
    planned: PlannedFence,
    fence_report: FenceReport,
    namespace: dict[str, Any],
    plan: PagePlan,
    report: Report,
    draw: Draw,
) -> None:
    if not plan.settings.execute:
        fence_report.html = "<p><em>(graph not drawn: execution is off)</em></p>"
        return
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
    fence_report.html = figure(svg)
