"""Snippets: doctest transcripts in `snippets/`, run in a page's namespace and checked.

A snippet is a `.pycon` file holding `>>>` examples and, below each, the output it must
print. The same function, `run_snippet`, serves the MkDocs build (which shows the real
output) and the Sybil tests (which fail on any difference), so the two cannot disagree.
"""

from __future__ import annotations

import builtins
import difflib
import doctest
import io
import re
import sys
import traceback
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

# ELLIPSIS lets an expected error be compared on a stable prefix: torch rewords its
# messages between releases, so a snippet stores "RuntimeError: Trying to ... second time...".
OPTIONFLAGS = doctest.ELLIPSIS

# A fence that runs a snippet: ```pycon exec="on" file="snippets/....pycon"```
FENCE_RE = re.compile(
    r"^(?P<indent>[ \t]*)```pycon\b(?P<options>[^\n]*\bexec=[^\n]*)\n"
    r"(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
# Any fence that asks to execute, whatever its language: what the build checks actually ran.
EXEC_FENCE_RE = re.compile(r"^[ \t]*```+[ \t]*[\w-]+[^\n]*\bexec=[^\n]*$", re.MULTILINE)
FILE_OPTION_RE = re.compile(r'\bfile="(?P<path>[^"]*)"')
# Any mention of a snippet file in a page, fenced or not: what the coverage test compares with.
SNIPPET_MENTION_RE = re.compile(r"snippets/[\w./-]+\.pycon")


def snippet_paths(markdown: str) -> list[str]:
    """The snippet each pycon fence of a page runs, in page order ("" where `file` is missing)."""
    return [
        match.group("path") if (match := FILE_OPTION_RE.search(fence.group("options"))) else ""
        for fence in FENCE_RE.finditer(markdown)
    ]


class SnippetError(Exception):
    """A snippet did not behave as its stored transcript says; the message names where."""


@dataclass(frozen=True)
class Snippet:
    """One snippet file, parsed into doctest examples."""

    path: str  # relative to the repository root, as written in the page
    examples: tuple[doctest.Example, ...]

    @classmethod
    def load(cls, root: Path, path: str, *, page: str) -> Snippet:
        file = root / path
        if not path.startswith("snippets/") or not file.is_file():
            raise SnippetError(f"{page}: snippet file {path!r} does not exist")
        text = file.read_text(encoding="utf-8")
        examples = doctest.DocTestParser().get_examples(text, name=path)
        if not examples:
            raise SnippetError(f"{path} (used by {page}): no '>>>' examples found")
        return cls(path, tuple(examples))


@dataclass(frozen=True)
class ExampleRun:
    """One example as executed: the reader sees `source` followed by `output`."""

    example: doctest.Example
    output: str
    stored: str | None = None  # with update=True: what to write to the file, if it changed

    @property
    def source(self) -> str:
        return self.example.source


def location(snippet: Snippet, example: doctest.Example) -> str:
    return f"{snippet.path}:{example.lineno + 1}"


Observer = Callable[[ExampleRun, dict[str, Any]], None]


def run_snippet(
    snippet: Snippet,
    namespace: dict[str, Any],
    *,
    page: str,
    observe: Observer | None = None,
    update: bool = False,
) -> list[ExampleRun]:
    """Run every example in `namespace`; raise SnippetError at the first that disagrees.

    `observe` is called after each example that behaved as its transcript says. With `update`,
    a different output (or error message) is not an error: the run records what to store.
    """
    checker = doctest.OutputChecker()
    runs: list[ExampleRun] = []
    for example in snippet.examples:
        where = f"{location(snippet, example)} (used by {page})"
        stdout, error = _execute(snippet.path, example, namespace)
        if error is not None and example.exc_msg is None:
            raise SnippetError(
                f"{where}: unexpected exception\n{_format_unexpected(snippet.path, error)}"
            )
        if error is None and example.exc_msg is not None:
            raise SnippetError(
                f"{where}: expected an exception, none was raised\n" + _diff(example.want, stdout)
            )
        if error is None:
            want, got, shown = example.want, stdout, stdout
            problem = "output differs from the transcript"
        else:
            # An expected exception: compare its last line(s) and show it the way Python does.
            got = "".join(traceback.format_exception_only(type(error), error))
            want, problem = example.exc_msg, "raised a different exception"
            shown = f"{stdout}Traceback (most recent call last):\n  ...\n{got}"
        stored = None
        if not checker.check_output(want, got, OPTIONFLAGS):
            if not update:
                raise SnippetError(f"{where}: {problem}\n" + _diff(want, got))
            stored = shown if error is None else shown.replace(got, _stable_prefix(got))
        runs.append(ExampleRun(example, shown, stored))
        if observe is not None:
            observe(runs[-1], namespace)
    return runs


def stored_runs(snippet: Snippet) -> list[ExampleRun]:
    """The transcript as stored in the file (expected errors included), without running it."""
    return [ExampleRun(example, example.want) for example in snippet.examples]


def transcript(runs: list[ExampleRun]) -> str:
    """The checked session as the reader sees it in a Python console."""
    lines: list[str] = []
    for run in runs:
        source_lines = run.source.rstrip("\n").split("\n")
        lines.append(">>> " + source_lines[0])
        lines.extend("... " + line for line in source_lines[1:])
        if source_lines[0].endswith(":"):  # a compound statement ends with an empty prompt
            lines.append("...")
        lines.extend(run.output.rstrip("\n").split("\n") if run.output else [])
    return "\n".join(lines)


def write_updates(root: Path, snippet: Snippet, runs: list[ExampleRun]) -> bool:
    """Rewrite the expected outputs of `snippet` in place from `runs`; True if anything changed.

    Only the output lines of changed examples are replaced: code, comments and the rest of the
    file stay byte for byte.
    """
    changed = [run for run in runs if run.stored is not None]
    file = root / snippet.path
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    for run in reversed(changed):  # bottom up, so earlier line numbers stay valid
        start = run.example.lineno + run.source.count("\n")
        end = start + run.example.want.count("\n")
        stored = run.stored.rstrip("\n")
        # doctest reads an empty line as the end of the output: it is spelled <BLANKLINE>.
        lines[start:end] = (
            [(line or "<BLANKLINE>") + "\n" for line in stored.split("\n")] if stored else []
        )
    if changed:
        file.write_text("".join(lines), encoding="utf-8")
    return bool(changed)


def _stable_prefix(exc_msg: str, length: int = 60) -> str:
    # torch rewords its messages between releases: store the start of the first line only.
    first = exc_msg.splitlines()[0]
    return first if len(first) <= length else first[:length].rstrip() + "..."


def _execute(
    path: str, example: doctest.Example, namespace: dict[str, Any]
) -> tuple[str, BaseException | None]:
    # Padding with newlines makes tracebacks point at the snippet file's own line numbers.
    code = compile("\n" * example.lineno + example.source, path, "single", dont_inherit=True)
    namespace.setdefault("__builtins__", builtins)
    buffer = io.StringIO()
    error: BaseException | None = None
    saved_displayhook = sys.displayhook
    sys.displayhook = sys.__displayhook__  # echo expression values like the real console
    try:
        with redirect_stdout(buffer):
            exec(code, namespace)
    except Exception as exc:
        error = exc
    finally:
        sys.displayhook = saved_displayhook
    return buffer.getvalue(), error


def _format_unexpected(path: str, error: BaseException) -> str:
    # Drop the runner's own frames: the reader needs the snippet line and what it called.
    tb: TracebackType | None = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != path:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _diff(expected: str, actual: str) -> str:
    lines = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        fromfile="expected (stored in the snippet)",
        tofile="actual (printed now)",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
