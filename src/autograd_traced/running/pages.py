"""Running pages: the one page runner the build, `mkdocs serve` and the tests share.

A page's fences that share its namespace (snippets, recorded graphs) run in a fresh fork of a
pristine process (`fork_server`), each example under a time limit, starting from fixed seeds
(`child`); hand-made diagrams are drawn here, once per content. Results are kept by the plan's
content key, so a build, a serve rebuild or a test that asks for the same inputs again reuses
them, and pages run in parallel, one child per core. Given a `ResultsCache`, the runner also
reuses the runs of earlier builds, and starts the fork server (which imports torch) only when
a page must run.
"""

from __future__ import annotations

import logging
import os
import re
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
from autograd_traced.running.results_cache import ResultsCache
from autograd_traced.running.snippets import shown_safely

log = logging.getLogger("mkdocs.plugins.autograd_traced")


class PageRunner:
    """Page runs by plan key, kept across builds and serve rebuilds of this process."""

    def __init__(self) -> None:
        self._results: dict[str, PageRun] = {}
        self._pending: dict[str, Future[PageRun]] = {}
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._interrupts = 0  # Ctrl-Cs so far: a page submitted before one does not start

    def run_page(
        self, plan: PagePlan, stages: Stages | None = None, cache: ResultsCache | None = None
    ) -> PageRun:
        """The page's run: kept when its inputs did not change, else run now."""
        key = plan.key
        with self._lock:
            if key in self._results:
                return self._results[key]
            future = self._pending.get(key)
        if future is None:
            recalled = _recall(plan, stages, cache)
            return self._store(key, recalled or _execute(plan, stages, cache))
        try:
            return future.result()
        except KeyboardInterrupt:  # Ctrl-C reaches this thread only: stop the other pages too
            raise fork_server.Interrupted(self.interrupt()) from None
        finally:
            with self._lock:
                self._pending.pop(key, None)

    def ready(self, plan: PagePlan) -> bool:
        """Whether `run_page(plan)` would return without waiting for a run."""
        key = plan.key  # a hash of the whole plan: computed once
        with self._lock:
            if key in self._results:
                return True
            future = self._pending.get(key)
        return future is not None and future.done()

    def interrupt(self) -> str:
        """Ctrl-C: the pages not started are dropped, the running ones stopped at once (not
        at their time limits); says what was running."""
        with self._lock:
            self._interrupts += 1
            for future in self._pending.values():
                future.cancel()
        running = fork_server.interrupt_shared()
        return f"interrupted while running {'; '.join(running)}" if running else "interrupted"

    def prefetch(
        self,
        plans: Iterable[PagePlan],
        stages: Stages | None = None,
        cache: ResultsCache | None = None,
    ) -> list[PagePlan]:
        """Start running every plan not run yet, in parallel, one child process per core; the
        plans that run in a process of their own.

        Call it from the main thread: the plans `cache` holds are read now, and the fork server
        is started only when some page must run in it."""
        to_run: dict[str, PagePlan] = {}
        for plan in plans:
            key = plan.key
            with self._lock:
                known = key in self._results or key in self._pending
            if known or key in to_run:
                continue
            if (recalled := _recall(plan, stages, cache)) is not None:
                self._store(key, recalled)
            else:
                to_run[key] = plan
        if any(_in_own_process(plan) for plan in to_run.values()):
            start_processes()  # from this thread, before any worker thread could fork it
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
            # A page that trains waits for its branch to import torch._dynamo (0.8 s): asked
            # for first, the branch imports it while the trunk runs the pages before it.
            trains = (plan for plan in to_run.values() if _in_own_process(plan) and _trains(plan))
            if training := next(trains, None):
                self._pool.submit(_server_for, training)  # its failure is the page's to say
            for key, plan in to_run.items():
                if key in self._results:  # a run that another call started has ended since
                    continue
                self._pending[key] = self._pool.submit(
                    self._run, plan, stages, cache, self._interrupts
                )
        return [plan for plan in to_run.values() if _in_own_process(plan)]

    def _run(
        self, plan: PagePlan, stages: Stages | None, cache: ResultsCache | None, interrupts: int
    ) -> PageRun:
        """A prefetched page's run, in a worker thread; not begun after a Ctrl-C (one that
        came as its process was being forked stops it there: ForkServer.call)."""
        if self._interrupts != interrupts:
            raise fork_server.Interrupted(f"interrupted before {plan.page} started")
        return self._store(plan.key, _execute(plan, stages, cache))

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


# Every page that runs is checked against the repository, one walk of it per page: a 40-page
# build walked it 80 times, which grows with pages times files.
_GUARD = source_guard.SharedWalks()

TRAINS = re.compile(r"\boptim\.[A-Z]\w*\(")  # constructs an optimizer: `torch.optim.SGD(`


def _server_for(plan: PagePlan) -> fork_server.ForkServer:
    """Where the page runs: a page that constructs an optimizer in its own text runs in the
    server's training branch (child.preload_training), others in the server itself. Which
    one depends on the page alone, never on the pages that ran before it."""
    server = start_processes()
    return server.branch("training", child.preload_training) if _trains(plan) else server


def _trains(plan: PagePlan) -> bool:
    return any(TRAINS.search(planned.source) for planned in plan.fences)


def torch_version(cache: ResultsCache | None = None) -> str:
    """The release the pages run with, as torch itself says (`2.13.0+cpu`): recorded by an
    earlier build in this environment, or asked of the fork server (and recorded)."""
    if cache is not None and (release := cache.release()) is not None:
        return release
    release = _server_torch_version()
    if cache is not None:
        cache.keep_release(release)
    return release


@cache
def _server_torch_version() -> str:
    return str(start_processes().call(child.torch_version))


def _in_own_process(plan: PagePlan) -> bool:
    """Whether the page runs in a process of its own: it has fences that share a namespace."""
    return plan.settings.execute and any(
        KINDS[planned.fence.language].stateful for planned in plan.fences
    )


def _recall(plan: PagePlan, stages: Stages | None, cache: ResultsCache | None) -> PageRun | None:
    """The page's run from an earlier build's reports, decided again here; None when there
    is none to trust (the reason is logged)."""
    if cache is None or plan.settings.update or not _in_own_process(plan):
        return None
    reports = cache.recall(plan)
    if reports is None:
        return None
    try:
        ran = verdict.decide(plan, reports)
    except verdict.ReportError as problem:
        return cache.ignore(plan, f"the verdict cannot read it ({problem})")
    if any(result.failed for result in ran):
        return cache.ignore(plan, "its outputs fail the verdict now")
    return PageRun(plan, _with_drawings(plan, ran, stages))


def _execute(plan: PagePlan, stages: Stages | None, cache: ResultsCache | None) -> PageRun:
    reusable = True
    if _in_own_process(plan):
        # The cache's folder is watched with the sources: only this process writes it, once
        # every page of the build has run (ResultsCache.write).
        watched = () if cache is None else (str(cache.folder),)
        sources = _GUARD.before(plan.root, watched)
        try:
            ran, reusable, reports = _run_in_process(plan)
        finally:  # the guard counts the pages that run: told even when this one raised
            changed = _GUARD.after(plan.root, sources, watched)
        if changed:
            why = "the repository changed while it ran (a page may not write it): "
            ran, reusable = verdict.crashed(plan, plan.page, why + ", ".join(changed)), False
            if cache is not None:
                cache.clear(f"{plan.page} changed the repository while it ran")
        passed = reusable and not any(result.failed for result in ran)
        if cache is not None and passed and isinstance(reports, list) and not plan.settings.update:
            cache.keep(plan, reports)
    else:
        no_report = lambda where, seconds: None  # noqa: E731
        ran = verdict.decide(plan, child.execute_page(plan, "", report=no_report))
    return PageRun(plan, _with_drawings(plan, ran, stages), reusable)


def _run_in_process(plan: PagePlan) -> tuple[list[FenceResult], bool, object]:
    """The page run in a child of the fork server, in a folder of its own: its fences'
    results, whether they may be kept, and the reports it sent (None when it sent none)."""
    reusable = True
    workdir = tempfile.mkdtemp(prefix="autograd-traced-page-")
    output = f"{workdir}.out"  # beside the page's folder, not in it: a listing shows it not
    with open(output, "x"):
        pass
    reports: object = None
    try:
        reports = _server_for(plan).call(
            child.execute_page,
            plan,
            workdir,
            output,
            answers={"dot": dot_svg},
            starting=f"{plan.page} (starting its process)",
        )
        ran = verdict.decide(plan, reports)
    except fork_server.StepFailed as failure:
        ran, reusable = verdict.crashed(plan, failure.where, str(failure)), False
    except verdict.ReportError as problem:
        where, why = plan.page, f"its process sent a malformed report: {problem}"
        ran, reusable = verdict.crashed(plan, where, why), False
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        _relay_output(plan.page, output)
    return ran, reusable, reports


def _relay_output(page: str, output: str) -> None:
    """Say what the page's process wrote outside its transcripts (a warning, a write to fd 2,
    what a process it started printed): escaped and cut, so it cannot drive the terminal."""
    try:
        with open(output, "rb") as file:
            written = file.read(_RELAYED_MAX + 1)
        os.unlink(output)
    except OSError:
        return
    if not written.strip():
        return
    text = written[:_RELAYED_MAX].decode("utf-8", "replace").rstrip("\n")
    if len(written) > _RELAYED_MAX:
        text += f"\n... cut at {_RELAYED_MAX} bytes"
    log.info("%s: its process wrote outside the transcripts:\n%s", page, shown_safely(text))


_RELAYED_MAX = 16_384  # bytes of a page's stray output shown in the build's log


def _with_drawings(
    plan: PagePlan, ran: list[FenceResult], stages: Stages | None
) -> tuple[FenceResult, ...]:
    """Every fence's result in page order: the page run's, and the hand-made diagrams'."""
    by_fence = iter(ran)
    return tuple(
        next(by_fence) if KINDS[planned.fence.language].stateful else _draw(planned, stages)
        for planned in plan.fences
    )


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
