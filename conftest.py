"""Collect every snippet fence in docs/*.md as a test (Sybil), and report what ran."""

from pathlib import Path

import pytest
from sybil import Sybil

from autograd_traced.sybil_snippets import EXECUTED, SnippetFenceParser

ROOT = Path(__file__).parent
snippet_pages = Sybil(parsers=[SnippetFenceParser(ROOT)], patterns=["*.md"], path="docs")
pytest_collect_file = snippet_pages.pytest()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--require-snippets",
        action="store_true",
        help="fail the run if no snippet example was executed (guards against 0 collected)",
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(
        f"snippets: {EXECUTED.snippets} snippet runs, {EXECUTED.examples} examples executed"
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.getoption("--require-snippets") and EXECUTED.examples == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
