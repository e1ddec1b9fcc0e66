"""Collect every executable fence in docs/**/*.md as a test (Sybil), and report what ran.

`pytest docs --update-examples` rewrites the expected outputs stored in the snippet files
from what the code prints now (like Pydantic's), for when an output legitimately changes.
"""

import os
from dataclasses import replace
from pathlib import Path

import pytest

from autograd_traced.running.pages import start_processes
from autograd_traced.running.torch_import import import_torch
from tests.support.snippet_pages import snippet_pages
from tests.support.workers import controller, parallel

# The tests run every page, whatever a writer's results cache holds: builds in this process
# and the commands they start read it from mkdocs.yml (the cache's own tests turn it on).
os.environ["AUTOGRAD_TRACED_CACHE"] = "false"

snippet_parser, snippet_sybil = snippet_pages(Path(__file__).parent)
pytest_collect_file = snippet_sybil.pytest()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--require-snippets",
        action="store_true",
        help="fail the run if no snippet example was executed (guards against 0 collected)",
    )
    parser.addoption(
        "--update-examples",
        action="store_true",
        help="rewrite the expected outputs in snippets/ from what the code prints now",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--update-examples"):
        if parallel(config):  # each worker would hear only its own pages of a shared snippet
            raise pytest.UsageError("--update-examples rewrites snippets: run it without -n")
        snippet_parser.settings = replace(snippet_parser.settings, update=True)
    if controller(config):
        return  # pytest-xdist's controller runs no test: its workers import and fork
    import_torch()  # before collection imports it unfrozen
    start_processes()  # forked now, before any test can change this process's state


def pytest_testnodedown(node: object, error: object) -> None:
    """A worker's count of what it executed, added to the controller's (pytest-xdist)."""
    counts = getattr(node, "workeroutput", {}).get("snippets")
    if counts:
        snippet_parser.executed.snippets += counts[0]
        snippet_parser.executed.examples += counts[1]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    executed = snippet_parser.executed
    if not executed.snippets and not terminalreporter.config.getoption("--require-snippets"):
        return  # a run without snippet tests (the browser test, a single unit test)
    terminalreporter.write_line(
        f"snippets: {executed.snippets} snippet runs, {executed.examples} examples executed"
    )
    for path in executed.updated:
        terminalreporter.write_line(f"updated expected output: {path}")
    for problem in executed.not_updated:
        terminalreporter.write_line(problem, red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if hasattr(session.config, "workeroutput"):  # a worker: its counts go to the controller
        executed = snippet_parser.executed
        session.config.workeroutput["snippets"] = (executed.snippets, executed.examples)
    # Updates are written now, once per file, so every page that shares a snippet is heard.
    snippet_parser.write_pending_updates()
    if snippet_parser.executed.not_updated:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    if session.config.getoption("--require-snippets") and snippet_parser.executed.examples == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
