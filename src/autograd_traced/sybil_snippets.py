"""Sybil parser: each snippet fence of a Markdown page becomes one pytest item.

The page is the Sybil document, so its snippets share one namespace and run in page order,
exactly as in the build. Running one item alone (`-k`) first runs the snippets before it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sybil import Document, Example, Region

from autograd_traced.snippets import (
    FENCE_RE,
    Snippet,
    SnippetError,
    run_snippet,
    snippet_paths,
    write_updates,
)

_PROGRESS_KEY = "__snippets_run__"  # how many of the page's snippets ran in this namespace
_FAILED_KEY = "__snippet_failed__"  # the snippet that failed: the page's state is now unknown


@dataclass(frozen=True)
class PageSnippet:
    page: str
    paths: tuple[str, ...]  # every snippet of the page, in order
    index: int  # which of them this item checks

    @property
    def path(self) -> str:
        return self.paths[self.index]


@dataclass
class ExecutionLog:
    """What the test session executed, for the summary and the zero-examples guard."""

    snippets: int = 0
    examples: int = 0
    updated: list[str] = field(default_factory=list)  # files --update-examples rewrote


class SnippetFenceParser:
    """`update=True` rewrites the expected outputs in place instead of failing on them.

    Each parser keeps its own log, so a pytest run nested in another (the harness tests the
    tests on a copy of the site) does not add to the outer run's counts.
    """

    def __init__(self, root: Path, *, update: bool = False) -> None:
        self.root = root
        self.update = update
        self.executed = ExecutionLog()

    def __call__(self, document: Document) -> Iterator[Region]:
        page = Path(document.path).relative_to(self.root).as_posix()
        paths = tuple(snippet_paths(document.text))
        for index, fence in enumerate(FENCE_RE.finditer(document.text)):
            yield Region(fence.start(), fence.end(), PageSnippet(page, paths, index), self.evaluate)

    def evaluate(self, example: Example) -> str | None:
        item: PageSnippet = example.parsed
        namespace = example.namespace
        if _FAILED_KEY in namespace:
            # Re-running a half-run snippet would report errors of its own making.
            pytest.skip(f"{item.path} needs the state of {namespace[_FAILED_KEY]}, which failed")
        try:
            for index in range(namespace.get(_PROGRESS_KEY, 0), item.index + 1):
                snippet = Snippet.load(self.root, item.paths[index], page=item.page)
                runs = run_snippet(snippet, namespace, page=item.page, update=self.update)
                if self.update and write_updates(self.root, snippet, runs):
                    self.executed.updated.append(snippet.path)
                namespace[_PROGRESS_KEY] = index + 1
                self.executed.snippets += 1
                self.executed.examples += len(runs)
        except SnippetError as exc:
            namespace[_FAILED_KEY] = item.paths[namespace.get(_PROGRESS_KEY, 0)]
            return str(exc)
        return None
