"""Sybil parser: each executable fence of a Markdown page becomes one pytest item.

The fences are found by the one fence grammar and checked by the same page run as the build:
the first item of a page runs the whole page in a process of its own (as the build does),
and each item reports its own fence's result. Running one item alone (`-k`) runs the same
page the same way, so it gives the same result as the full run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sybil import Document, Example, Region

from autograd_traced.fences.grammar import executable_fences
from autograd_traced.running.pages import shared_runner
from autograd_traced.running.plan import PagePlan, Settings, plan_page
from autograd_traced.running.snippets import ExampleRun, Snippet, write_updates

_RUN_KEY = "__page_run__"  # the page's run, in the Sybil document's namespace


@dataclass(frozen=True)
class PageFence:
    plan: PagePlan
    index: int  # which of the page's executable fences this item checks

    @property
    def label(self) -> str:
        return self.plan.fences[self.index].fence.label


@dataclass
class ExecutionLog:
    """What the test session executed, for the summary and the zero-examples guard."""

    snippets: int = 0
    examples: int = 0
    updated: list[str] = field(default_factory=list)  # files --update-examples rewrote
    not_updated: list[str] = field(default_factory=list)  # ... could not, and why


@dataclass
class PendingUpdate:
    """A snippet's new outputs, gathered from every page that runs it: the file is written
    once, at the end of the session, from the text all of them parsed."""

    snippet: Snippet
    source: str
    runs: dict[int, ExampleRun] = field(default_factory=dict)  # by the example's line
    disagree: set[int] = field(default_factory=set)  # lines pages printed differently


class SnippetFenceParser:
    """`settings.update` rewrites the expected outputs in place instead of failing on them.

    Each parser keeps its own log, so a pytest run nested in another (the harness tests the
    tests on a copy of the site) does not add to the outer run's counts.
    """

    def __init__(self, root: Path, settings: Settings | None = None) -> None:
        self.root = root
        self.settings = settings or Settings()
        self.executed = ExecutionLog()
        self.pending: dict[str, PendingUpdate] = {}

    def __call__(self, document: Document) -> Iterator[Region]:
        page = Path(document.path).relative_to(self.root).as_posix()
        plan = plan_page(self.root, page, document.text, self.settings)
        for index, fence in enumerate(executable_fences(document.text)):
            yield Region(fence.start, fence.end, PageFence(plan, index), self.evaluate)

    def evaluate(self, example: Example) -> str | None:
        item: PageFence = example.parsed
        if _RUN_KEY not in example.namespace:  # the page's first item runs it, for all
            example.namespace[_RUN_KEY] = shared_runner().run_page(item.plan)
        result = example.namespace[_RUN_KEY].results[item.index]
        if result.skipped:
            pytest.skip(f"{item.label}: {result.skipped}")
        if result.error:
            return result.error
        if result.language == "pycon":
            self.executed.snippets += 1
            self.executed.examples += len(result.runs)
            if item.plan.settings.update:
                self._write_updates(item, result.runs)
        return None

    def _write_updates(self, item: PageFence, runs: tuple[ExampleRun, ...]) -> None:
        planned = item.plan.fences[item.index]
        path = planned.fence.options["file"]
        pending = self.pending.get(path)
        if pending is None:
            snippet = Snippet.parse(path, planned.source, page=planned.where)
            pending = self.pending[path] = PendingUpdate(snippet, planned.source)
        for run in runs:
            if run.stored is None:
                continue
            line = run.example.lineno
            if pending.runs.setdefault(line, run).stored != run.stored:
                pending.disagree.add(line)

    def write_pending_updates(self) -> None:
        """Write every snippet's new outputs, once per file: called when the session ends."""
        for path, pending in sorted(self.pending.items()):
            file = self.root / path
            if pending.disagree:
                lines = ", ".join(f"{path}:{line + 1}" for line in sorted(pending.disagree))
                why = f"pages print different outputs at {lines}"
            elif file.read_text(encoding="utf-8") != pending.source:
                why = "it changed while the tests ran"
            else:
                try:
                    if write_updates(self.root, pending.snippet, list(pending.runs.values())):
                        self.executed.updated.append(path)
                    continue
                except OSError as error:
                    why = str(error)
            self.executed.not_updated.append(f"{path}: NOT updated: {why}")
        self.pending.clear()
