"""The page run: a page's executable fences, checked, run in a process of their own, with
their results. The build, the tests and the checks all go through it.

- `plan_page` reads the page's fences with the one fence grammar, checks their options and
  reads the files they name. A plan is keyed by its content (page text, snippet and diagram
  files, settings, the torch release, this package's code), so a result is reused only for
  exactly the inputs that produced it.
- `run_page` runs a plan: the fences that share the page's namespace (snippets, recorded
  graphs) run in a fresh fork of a pristine process (`fork_server`), each example under a time
  limit, starting from fixed seeds; hand-made diagrams are drawn here, once per content.
- `prefetch` starts the runs of many pages at once, one child per core.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from autograd_traced.build import stages as build_mode
from autograd_traced.drawing import svg
from autograd_traced.drawing.diagrams import cached_diagram_svg
from autograd_traced.fences.grammar import Fence, executable_fences
from autograd_traced.running import child as execution
from autograd_traced.running import fork_server
from autograd_traced.running.snippets import ExampleRun

DEFAULT_TIMEOUT = 60.0  # seconds an example may run; `snippet_timeout` in mkdocs.yml's extra

# Each language's options, and the values an option may take (None: any non-empty text).
OPTIONS: dict[str, dict[str, tuple[str, ...] | None]] = {
    "pycon": {"exec": ("on",), "file": None, "trace": ("on", "off"), "timeout": None},
    "autograd-graph": {
        "exec": ("on",),
        "of": None,
        "direction": ("forward", "backward"),
        "alt": None,
    },
    "diagram": {"exec": ("on",), "file": None},
}
REQUIRED = {"pycon": "file", "autograd-graph": "of", "diagram": "file"}
STATEFUL = ("pycon", "autograd-graph")  # what reads or changes the page's namespace


@dataclass(frozen=True)
class Settings:
    timeout: float = DEFAULT_TIMEOUT
    execute: bool = True  # False: stored transcripts, no torch (the benchmark's baseline)
    update: bool = False  # rewrite stored outputs instead of failing on them

    @classmethod
    def from_extra(cls, extra: dict[str, object], **overrides: object) -> Settings:
        timeout = extra.get("snippet_timeout", DEFAULT_TIMEOUT)
        return cls(timeout=float(timeout), **overrides)  # type: ignore[arg-type]


@dataclass(frozen=True)
class PlannedFence:
    fence: Fence
    where: str  # "docs/page.md:12", the fence's line in the page
    problem: str = ""  # what is wrong with its options, found before anything runs
    source: str = ""  # the text of the snippet or diagram file it names
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class PagePlan:
    root: str
    page: str  # e.g. "docs/computing-gradients.md"
    fences: tuple[PlannedFence, ...]
    settings: Settings

    @property
    def key(self) -> str:
        digest = hashlib.sha256(repr((_engine_version(), self)).encode())
        return digest.hexdigest()


@dataclass(frozen=True)
class FenceResult:
    """What one fence shows, or why it cannot be shown."""

    where: str
    language: str
    options: dict[str, str]
    html: str = ""  # figures and traces, ready to insert
    console: str = ""  # the checked transcript, highlighted by the page's own highlighter
    title: str = ""  # the console block's title: the snippet's path
    error: str = ""  # names the page and line, the snippet and line, and the cause
    skipped: str = ""  # why it was not run: an earlier fence failed
    runs: tuple[ExampleRun, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.error)


@dataclass(frozen=True)
class PageRun:
    plan: PagePlan
    results: tuple[FenceResult, ...]
    reusable: bool = True  # False when its process was stopped: a time limit, a crash

    @property
    def failures(self) -> list[FenceResult]:
        return [result for result in self.results if result.failed]

    def outputs(self) -> str:
        """Everything the page's snippets printed, in order."""
        return "\n".join(run.output for result in self.results for run in result.runs)


def plan_page(root: Path, page: str, markdown: str, settings: Settings) -> PagePlan:
    planned = tuple(
        _plan_fence(root, page, fence, settings) for fence in executable_fences(markdown)
    )
    return PagePlan(str(root), page, planned, settings)


def plan_page_file(root: Path, page: Path, settings: Settings | None = None) -> PagePlan:
    """The plan of a page read from disk (the tests' way in)."""
    return plan_page(
        root,
        page.relative_to(root).as_posix(),
        page.read_text(encoding="utf-8"),
        settings or Settings(),
    )


def _plan_fence(root: Path, page: str, fence: Fence, settings: Settings) -> PlannedFence:
    where = f"{page}:{fence.line}"
    planned = PlannedFence(fence, where, timeout=settings.timeout)
    allowed = OPTIONS[fence.language]
    problems = []
    if fence.unreadable:
        problems.append(f'cannot read {fence.unreadable!r}: write options as key="value"')
    for key, value in fence.options.items():
        if key not in allowed:
            problems.append(f"unknown option {key}={value!r}")
        elif (values := allowed[key]) is not None and value not in values:
            problems.append(f"{key}={value!r} is not one of {', '.join(map(repr, values))}")
        elif values is None and not value.strip():
            problems.append(f"{key} is empty")
    if "exec" not in fence.options:
        problems.append('missing exec="on"')
    required = REQUIRED[fence.language]
    if required not in fence.options:
        problems.append(f"missing {required}=...")
    if fence.body.strip():
        problems.append("the body must be empty: the code lives in the file it names")
    if timeout := fence.options.get("timeout"):
        try:
            planned = replace(planned, timeout=float(timeout))
            if planned.timeout <= 0:
                raise ValueError
        except ValueError:
            problems.append(f"timeout={timeout!r} is not a positive number of seconds")
    path = fence.options.get("file", "")
    if path and not problems:
        suffix, folder = (".pycon", "snippets/") if fence.language == "pycon" else (".dot", "docs/")
        file = root / path
        if not path.startswith(folder) or not path.endswith(suffix) or not file.is_file():
            problems.append(f"{path!r} does not exist (a {suffix} file under {folder})")
        else:
            planned = replace(planned, source=file.read_text(encoding="utf-8"))
    if problems:
        takes = ", ".join(f"{key}=" for key in allowed)
        problem = f"{where}: this {fence.language} fence takes {takes} and an empty body: "
        return replace(planned, problem=problem + "; ".join(problems))
    return planned


# --- running ------------------------------------------------------------------------------

_results: dict[str, PageRun] = {}  # by plan key: reused across builds and serve rebuilds
_pending: dict[str, Future[PageRun]] = {}
_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def start_processes() -> fork_server.ForkServer:
    """Fork the server pages run in, which imports torch while this process goes on (the
    build reads and renders pages meanwhile, on the other core). Call it early, from the
    main thread, before any page runs (see fork_server.shared)."""
    return fork_server.shared(execution.preload)


@cache
def torch_version() -> str:
    """The release the pages run with, as torch itself says (`2.13.0+cpu`)."""
    return str(start_processes().call(execution.torch_version))


def run_page(plan: PagePlan) -> PageRun:
    """The page's run: from the cache when its inputs did not change, else run now."""
    key = plan.key
    with _lock:
        if key in _results:
            return _results[key]
        future = _pending.get(key)
    if future is None:
        return _store(key, _execute(plan))
    try:
        return future.result()
    except KeyboardInterrupt:  # Ctrl-C reaches this thread only: stop the other pages too
        running = fork_server.shared().interrupt()
        raise fork_server.Interrupted(f"interrupted while running {'; '.join(running)}") from None
    finally:
        with _lock:
            _pending.pop(key, None)


def prefetch(plans: Iterable[PagePlan]) -> None:
    """Start running every plan not run yet, in parallel, one child process per core."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        for plan in plans:
            key = plan.key
            if key not in _results and key not in _pending:
                _pending[key] = _pool.submit(lambda p=plan, k=key: _store(k, _execute(p)))


def forget_except(keys: Iterable[str]) -> None:
    """Drop the results of other inputs: `mkdocs serve` keeps only the current ones."""
    keep = set(keys)
    with _lock:
        for key in [key for key in _results if key not in keep]:
            del _results[key]


def _store(key: str, run: PageRun) -> PageRun:
    if run.reusable:  # else the next build tries again: the machine may just have been busy
        with _lock:
            _results[key] = run
    return run


def _execute(plan: PagePlan) -> PageRun:
    stateful = tuple(p for p in plan.fences if p.fence.language in STATEFUL)
    reusable = True
    if plan.settings.execute and stateful:
        try:
            ran = start_processes().call(execution.execute_page, plan, answers={"dot": svg.dot_svg})
        except fork_server.StepFailed as failure:
            ran, reusable = execution.crashed(plan, failure.where, str(failure)), False
    else:
        ran = execution.execute_page(plan, report=lambda where, seconds: None)
    by_fence = iter(ran)
    results = [
        next(by_fence) if planned.fence.language in STATEFUL else _draw_diagram(planned)
        for planned in plan.fences
    ]
    return PageRun(plan, tuple(results), reusable)


def _draw_diagram(planned: PlannedFence) -> FenceResult:
    fence = planned.fence
    result = FenceResult(planned.where, fence.language, fence.options)
    if planned.problem:
        return replace(result, error=planned.problem)
    try:
        with build_mode.timed("diagrams"):
            svg = cached_diagram_svg(planned.source)
    except Exception as error:  # a .dot syntax error, a missing alt line
        return replace(result, error=f"{planned.where}: {fence.options['file']}: {error}")
    return replace(result, html=execution.figure(svg))


def _engine_version() -> tuple[str, str]:
    """This package's code and the torch release: a new one invalidates every result."""
    return _code_version(), _installed_torch()


@cache
def _installed_torch() -> str:
    # Read from the installed package, so this process need not import torch itself.
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return ""


@cache
def _code_version() -> str:
    digest = hashlib.sha256(sys.version.encode())
    package = Path(__file__).parents[1]  # every module of the package, in every folder
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()
