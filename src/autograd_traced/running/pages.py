"""Running pages: the one page runner the build, `mkdocs serve` and the tests share.

A page's fences that share its namespace (snippets, recorded graphs) run in a fresh fork of a
pristine process (`fork_server`), each example under a time limit, starting from fixed seeds
(`child`); hand-made diagrams are drawn here, once per content. Results are kept by the plan's
content key, so a build, a serve rebuild or a test that asks for the same inputs again reuses
them, and pages run in parallel, one child per core.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import cache

from autograd_traced.build.stages import Stage, Stages
from autograd_traced.drawing.diagrams import diagram_svg
from autograd_traced.drawing.svg import dot_svg, figure
from autograd_traced.fences.registry import KINDS
from autograd_traced.running import child, fork_server, source_guard, verdict
from autograd_traced.running.plan import FenceResult, PagePlan, PageRun, PlannedFence


class PageRunner:
    """Page runs by plan key, kept across builds and serve rebuilds of this process."""

    def __init__(self) -> None:
        self._results: dict[str, PageRun] = {}
        self._pending: dict[str, Future[PageRun]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def run_page(self, plan: PagePlan, stages: Stages | None = None) -> PageRun:
        """The page's run: from the cache when its inputs did not change, else run now."""
        key = plan.key
        with self._lock:
            if key in self._results:
                return self._results[key]
            future = self._pending.get(key)
        if future is None:
            return self._store(key, _execute(plan, stages))
        try:
            return future.result()
        except KeyboardInterrupt:  # Ctrl-C reaches this thread only: stop the other pages too
            raise fork_server.Interrupted(self.interrupt()) from None
        finally:
            with self._lock:
                self._pending.pop(key, None)

    def interrupt(self) -> str:
        """Ctrl-C: the pages not started are dropped, the running ones stopped at once (not
        at their time limits); says what was running."""
        with self._lock:
            for future in self._pending.values():
                future.cancel()
        running = fork_server.interrupt_shared()
        return f"interrupted while running {'; '.join(running)}" if running else "interrupted"

    def prefetch(self, plans: Iterable[PagePlan], stages: Stages | None = None) -> None:
        """Start running every plan not run yet, in parallel, one child process per core."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
            for plan in plans:
                key = plan.key
                if key not in self._results and key not in self._pending:
                    self._pending[key] = self._pool.submit(
                        lambda p=plan, k=key: self._store(k, _execute(p, stages))
                    )

    def forget_except(self, keys: Iterable[str]) -> None:
        """Drop the results of other inputs: `mkdocs serve` keeps only the current ones."""
        keep = set(keys)
        with self._lock:
            for key in [key for key in self._results if key not in keep]:
                del self._results[key]

    def _store(self, key: str, run: PageRun) -> PageRun:
        if run.reusable:  # else the next build tries again: the machine may just have been busy
            with self._lock:
                self._results[key] = run
        return run


@cache
def shared_runner() -> PageRunner:
    """This process's runner: the plugin's builds and the Sybil tests reuse each other's runs."""
    return PageRunner()


def start_processes() -> fork_server.ForkServer:
    """Fork the server pages run in, which imports torch while this process goes on (the
    build reads and renders pages meanwhile, on the other core). Call it early, from the
    main thread, before any page runs (see fork_server.shared)."""
    return fork_server.shared(child.preload)


@cache
def torch_version() -> str:
    """The release the pages run with, as torch itself says (`2.13.0+cpu`)."""
    return str(start_processes().call(child.torch_version))


def _execute(plan: PagePlan, stages: Stages | None) -> PageRun:
    stateful = tuple(p for p in plan.fences if KINDS[p.fence.language].stateful)
    reusable = True
    if plan.settings.execute and stateful:
        sources = source_guard.snapshot(plan.root)
        workdir = tempfile.mkdtemp(prefix="autograd-traced-page-")
        try:
            reports = start_processes().call(
                child.execute_page, plan, workdir, answers={"dot": dot_svg}
            )
            ran = verdict.decide(plan, reports)
        except fork_server.StepFailed as failure:
            ran, reusable = verdict.crashed(plan, failure.where, str(failure)), False
        except verdict.ReportError as problem:
            where, why = plan.page, f"its process sent a malformed report: {problem}"
            ran, reusable = verdict.crashed(plan, where, why), False
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if changed := source_guard.changes(plan.root, sources):
            why = "the repository changed while it ran (a page may not write it): "
            ran, reusable = verdict.crashed(plan, plan.page, why + ", ".join(changed)), False
    else:
        no_report = lambda where, seconds: None  # noqa: E731
        ran = verdict.decide(plan, child.execute_page(plan, "", report=no_report))
    by_fence = iter(ran)
    results = [
        next(by_fence) if KINDS[planned.fence.language].stateful else _draw(planned, stages)
        for planned in plan.fences
    ]
    return PageRun(plan, tuple(results), reusable)


def _draw(planned: PlannedFence, stages: Stages | None) -> FenceResult:
    """A hand-made diagram, drawn in this process (once per content: pages share it)."""
    fence = planned.fence
    result = FenceResult(planned.where, fence.language, fence.options)
    if planned.problem:
        return replace(result, error=planned.problem)
    try:
        with Stages.timing(stages, Stage.DIAGRAMS):
            svg = diagram_svg(planned.source, planned.timeout)
    except Exception as error:  # a .dot syntax error, a missing alt line
        return replace(result, error=f"{planned.where}: {fence.options['file']}: {error}")
    return replace(result, html=figure(svg))
