"""Every failure of a build, in the order met, and how a writer under `mkdocs serve` hears of
them. The plugin decides what they stop: a build fails before any page is written; serve
keeps serving, with the failure on the page and in the terminal."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field

# Outside the "mkdocs" logger on purpose: strict mode counts that logger's warnings and errors,
# and a counted one would stop `mkdocs serve` from serving the page that shows the failure.
WRITER_LOG = "autograd_traced.serve"
_writer_log = logging.getLogger(WRITER_LOG)
_writer_log.propagate = False
if not _writer_log.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    _writer_log.addHandler(_handler)


@dataclass
class BuildFailures:
    messages: list[str] = field(default_factory=list)

    def add(self, message: str) -> str:
        self.messages.append(message)
        return message


def report_to_writer(message: str, *, on_page: bool = True) -> None:
    """Under `mkdocs serve`: say what failed in the terminal (and whether the page shows it)."""
    shown = "shown on the page; " if on_page else ""
    _writer_log.error("%s\n(%sfix it and save: the site rebuilds)", message, shown)
