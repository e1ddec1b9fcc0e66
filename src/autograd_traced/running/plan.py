"""A page's plan and its run's results: plain, frozen data that the build, the tests, the
page's own process and the results cache all share.

`plan_page` reads the page's fences with the one fence grammar, checks their options against
the fence registry and reads the files they name, before anything runs. A plan is keyed by
its content (its fences, snippet and diagram files, settings) and the environment its outputs
depend on (`environment`: Python, torch, numpy, Graphviz, the machine, every module of this
package), so a result is reused only for exactly the inputs that produced it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import sys
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from autograd_traced.fences.grammar import Fence, executable_fences
from autograd_traced.fences.registry import KINDS
from autograd_traced.running.snippets import ExampleRun

DEFAULT_TIMEOUT = 60.0  # seconds an example may run; the plugin's `timeout` option
DEFAULT_MEMORY = 2048  # MiB a page's process may map beyond the fork server's; `memory`


@dataclass(frozen=True)
class Settings:
    timeout: float = DEFAULT_TIMEOUT
    memory: int = DEFAULT_MEMORY
    execute: bool = True  # False: stored transcripts, no torch (the benchmark's baseline)
    update: bool = False  # rewrite stored outputs instead of failing on them


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
        digest = hashlib.sha256(repr((sorted(environment().items()), self)).encode())
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
    fences = executable_fences(markdown)
    ends = [0, *(fence.end for fence in fences)]
    planned = tuple(
        _plan_fence(root, page, fence, settings, before=markdown[end : fence.start])
        for fence, end in zip(fences, ends, strict=False)
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


def _plan_fence(
    root: Path, page: str, fence: Fence, settings: Settings, before: str
) -> PlannedFence:
    """The fence checked and its file read; `before` is the page's text since the previous
    executable fence, where a paired option's text must be."""
    where = f"{page}:{fence.line}"
    planned = PlannedFence(fence, where, timeout=settings.timeout)
    kind = KINDS[fence.language]
    allowed = kind.options
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
    if kind.required not in fence.options:
        problems.append(f"missing {kind.required}=...")
    for (key, value), pairing in kind.paired.items():
        if fence.options.get(key) != value:
            continue
        if pairing.before not in before:
            problems.append(
                f'{key}={value!r} needs {pairing.before.strip()}..." since the previous '
                f"fence: {pairing.why}"
            )
        problems += [
            f"{key}={value!r} cannot go with {other}={value_!r}: {pairing.why}"
            for other, value_ in pairing.excludes.items()
            if fence.options.get(other) == value_
        ]
    if fence.body.strip():
        problems.append("the body must be empty: the code lives in the file it names")
    if kind.time_limit and (seconds := fence.options.get(kind.time_limit)):
        try:
            planned = replace(planned, timeout=float(seconds))
            if planned.timeout <= 0:
                raise ValueError
        except ValueError:
            problems.append(f"{kind.time_limit}={seconds!r} is not a positive number of seconds")
    path = fence.options.get("file", "")
    if path and kind.file is not None and not problems:
        folder, suffix = kind.file.folder, kind.file.suffix
        file = root / path
        if not inside(root, folder, path):  # checked before anything reads it
            problems.append(f"{path!r} leads outside {folder} (a link or '..')")
        elif not path.endswith(suffix) or not file.is_file():
            problems.append(f"{path!r} does not exist (a {suffix} file under {folder})")
        else:
            planned = replace(planned, source=file.read_text(encoding="utf-8"))
    if problems:
        takes = ", ".join(f"{key}=" for key in allowed)
        problem = f"{where}: this {fence.language} fence takes {takes} and an empty body: "
        return replace(planned, problem=problem + "; ".join(problems))
    return planned


def inside(root: Path, folder: str, path: str) -> bool:
    """Whether `path` (relative to `root`) is under `folder` once every link and '..' in it is
    followed: a page may name only the repository's own files."""
    real = (root / folder).resolve()
    return path.startswith(folder) and (root / path).resolve().is_relative_to(real)


@cache
def environment() -> dict[str, str]:
    """What a page's outputs depend on besides its plan: a new release of any of these
    invalidates every result. Read without importing torch (the build's process never does)."""
    return {
        "python": sys.version,
        "torch": _installed("torch"),
        "numpy": _installed("numpy"),
        "graphviz": _graphviz_version(),  # draws the graphs a page's report carries
        "machine": f"{platform.system()} {platform.machine()}",
        "engine": _code_version(),
    }


def _installed(distribution: str) -> str:
    # Read from the installed package, so this process need not import it.
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _graphviz_version() -> str:
    try:
        done = subprocess.run(["dot", "-V"], capture_output=True, text=True, check=False)
    except OSError:
        return ""
    return (done.stderr or done.stdout).strip()


PACKAGE = Path(__file__).parents[1]


@cache
def _code_version() -> str:
    return code_version(PACKAGE)


def code_version(package: Path) -> str:
    """Python's version and every module of the package, in every folder, by path and text."""
    digest = hashlib.sha256(sys.version.encode())
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes())
    return digest.hexdigest()
