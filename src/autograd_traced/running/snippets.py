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
import linecache
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

# ELLIPSIS lets an expected error be compared on a stable prefix: torch rewords its
# messages between releases, so a snippet stores "RuntimeError: Trying to ... second time...".
OPTIONFLAGS = doctest.ELLIPSIS
# How a transcript shows an expected error: Python's header, the frames cut, then the error.
TRACEBACK_HEADER = "Traceback (most recent call last):"
SHOWN_TRACEBACK = f"{TRACEBACK_HEADER}\n  ...\n"


class SnippetError(Exception):
    """A snippet did not behave as its stored transcript says; the message names where."""


@dataclass(frozen=True)
class Snippet:
    """One snippet file, parsed into doctest examples."""

    path: str  # relative to the repository root, as written in the page
    examples: tuple[doctest.Example, ...]

    @classmethod
    def parse(cls, path: str, text: str, *, page: str) -> Snippet:
        text = text.removeprefix("\ufeff")  # a BOM would hide the first ">>>" from doctest
        try:
            examples = doctest.DocTestParser().get_examples(text, name=path)
        except ValueError as error:  # e.g. ">>>x = 1": doctest names the line in its message
            line = re.search(r"line (\d+) of", str(error))
            where = f"{path}:{line.group(1)}" if line else path  # doctest counts from 1
            cause = re.sub(r"^line \d+ of the docstring for \S+ ", "", str(error))
            raise SnippetError(
                f"{where} (used by {page}): cannot read the transcript: {cause}"
            ) from None
        if not examples:
            raise SnippetError(f"{path} (used by {page}): no '>>>' examples found")
        return cls(path, tuple(examples))


@dataclass(frozen=True)
class ExampleRun:
    """One example as executed: the reader sees `source` followed by `output`."""

    example: doctest.Example
    output: str
    stored: str | None = None  # with update=True: what to write to the file, if it changed
    raised: bool = False  # the example raised the exception its transcript expects
    echoed: bool = False  # the console echoed a value (a script has to print it)

    @property
    def source(self) -> str:
        return self.example.source


def location(snippet: Snippet, example: doctest.Example) -> str:
    return f"{snippet.path}:{example.lineno + 1}"


@dataclass(frozen=True)
class Executed:
    """What one example did, as plain data: the page's process reports it, and the build's
    own process compares it with the stored transcript (`check_snippet`), so nothing a
    snippet changes in its process can decide its verdict."""

    output: str  # what it printed
    exception: str | None = None  # the last line(s) of its exception, as Python shows them
    traceback: str = ""  # the frames from the snippet line down, when it raised
    echoed: bool = False  # the console echoed a value that was not None

    @classmethod
    def from_json(cls, data: object) -> Executed:
        """What a page's process sent, if it has exactly this shape (else ValueError)."""
        if (
            isinstance(data, dict)
            and data.keys() == {"output", "exception", "traceback", "echoed"}
            and isinstance(data["output"], str)
            and isinstance(data["exception"], str | None)
            and isinstance(data["traceback"], str)
            and isinstance(data["echoed"], bool)
        ):
            return cls(**data)
        raise ValueError(f"not an example's report: {data!r:.200}")


Observer = Callable[[ExampleRun, dict[str, Any]], None]
Before = Callable[[str], None]  # called with an example's location before it runs
Watcher = Callable[[dict[str, Any]], AbstractContextManager[object]]  # around each example


def run_snippet(
    snippet: Snippet,
    namespace: dict[str, Any],
    *,
    page: str,
    observe: Observer | None = None,
    before: Before | None = None,
    watch: Watcher | None = None,
    update: bool = False,
    executed: list[Executed] | None = None,
) -> list[ExampleRun]:
    """Run every example in `namespace`; raise SnippetError at the first that disagrees.

    `observe` is called after each example that behaved as its transcript says, `before`
    before each one runs, and `watch` gives a context each one runs in (the tracer hooks
    autograd there); `executed` collects what each example did, for the build's own check.
    With `update`, a different output (or error message) is not an error: the run records
    what to store.
    """
    runs: list[ExampleRun] = []
    _register_source(snippet)
    for example in snippet.examples:
        if before is not None:
            before(_where(snippet, example, page))
        builtins_before = dict(vars(builtins))
        with watch(namespace) if watch is not None else nullcontext():
            did = _execute(snippet.path, example, namespace)
        if changed := _restore(builtins_before):
            raise SnippetError(
                f"{_where(snippet, example, page)}: changes Python's builtins ({changed}); a "
                "snippet may not: the code that runs and reports it shares them"
            )
        if executed is not None:
            executed.append(did)
        run = check_example(snippet, example, did, page=page, update=update)
        runs.append(run)
        if observe is not None:
            try:
                observe(run, namespace)
            except Exception as exc:  # the snippet ran; showing its state did not
                raise SnippetError(
                    f"{_where(snippet, example, page)}: could not record the state after this "
                    "line\n" + "".join(traceback.format_exception(exc))
                ) from exc
    return runs


def _restore(before: dict[str, Any]) -> str:
    """Put the builtins back as they were; the names that had changed, if any (`_` is the
    console's last value: echoing an expression sets it)."""
    now, gone = vars(builtins), object()
    # One pass over the names before (20 us an example; a union of both sides took 31), the
    # names added after; sorted once the builtins are back (a snippet may delete `sorted`).
    changed = {name for name, value in before.items() if now.get(name, gone) is not value}
    changed = (changed | (now.keys() - before.keys())) - {"_"}
    if not changed:
        return ""
    now.clear()
    now.update(before)
    return ", ".join(sorted(changed))


def check_snippet(
    snippet: Snippet, executed: list[Executed], *, page: str, update: bool = False
) -> list[ExampleRun]:
    """The verdict on a snippet from what its examples did: every example must have run and
    behaved as stored (the first that did not raises SnippetError)."""
    runs = [
        check_example(snippet, example, did, page=page, update=update)
        for example, did in zip(snippet.examples, executed, strict=False)
    ]
    if len(executed) > len(snippet.examples):
        raise SnippetError(f"{snippet.path} (used by {page}): more examples reported than stored")
    if len(executed) < len(snippet.examples):
        missing = snippet.examples[len(executed)]
        raise SnippetError(
            f"{_where(snippet, missing, page)}: not run (its page's process did not report it)"
        )
    return runs


def check_example(
    snippet: Snippet, example: doctest.Example, did: Executed, *, page: str, update: bool
) -> ExampleRun:
    """One example's verdict: what it printed (or raised) against its stored transcript."""
    where = _where(snippet, example, page)
    if did.exception is not None and example.exc_msg is None:
        cause = "unexpected exception"
        if did.exception.startswith("MemoryError") or "can't allocate memory" in did.exception:
            cause += " (out of memory: the plugin's `memory` option bounds a page's process)"
        raise SnippetError(f"{where}: {cause}\n{shown_safely(did.traceback)}")
    if did.exception is None and example.exc_msg is not None:
        raise SnippetError(
            f"{where}: expected an exception, none was raised\n" + _diff(example.want, did.output)
        )
    if did.exception is None:
        want, got, shown = example.want, did.output, did.output
        problem = "output differs from the transcript"
    else:  # an expected exception: compare its last line(s), show it the way Python does
        want, got = example.exc_msg, did.exception
        problem, shown = "raised a different exception", f"{did.output}{SHOWN_TRACEBACK}{got}"
    stored = None
    # A checker of this process's own: a snippet cannot reach it to change what it says.
    if not doctest.OutputChecker().check_output(want, got, OPTIONFLAGS):
        if not update:
            raise SnippetError(f"{where}: {problem}\n" + _diff(want, got))
        stored = shown if did.exception is None else shown.replace(got, _stable_prefix(got))
    return ExampleRun(example, shown, stored, raised=did.exception is not None, echoed=did.echoed)


def _where(snippet: Snippet, example: doctest.Example, page: str) -> str:
    return f"{location(snippet, example)} (used by {page})"


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

    Only the output lines of changed examples are replaced: code, comments, line endings and
    the rest of the file stay byte for byte. The file is replaced atomically: killed at any
    moment, it holds either the old transcript or the new one. A read-only file is refused.
    """
    changed = [run for run in runs if run.stored is not None]
    if not changed:
        return False
    file = root / snippet.path
    if not file.stat().st_mode & 0o222:  # the mode, not access(): root may write anything
        raise PermissionError(f"{snippet.path} is read-only")
    lines = file.read_bytes().decode("utf-8").splitlines(keepends=True)
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for run in sorted(changed, key=lambda run: -run.example.lineno):  # bottom up: earlier
        assert run.stored is not None  # line numbers stay valid
        start = run.example.lineno + 1  # past the ">>>" line and its "..." continuations,
        while start < len(lines) and lines[start].startswith("..."):  # the bare one included
            start += 1
        end = start + run.example.want.count("\n")
        stored = run.stored.rstrip("\n")
        # doctest reads a blank line as the end of the output: it is spelled <BLANKLINE>.
        lines[start:end] = (
            [(line if line.strip() else "<BLANKLINE>") + newline for line in stored.split("\n")]
            if stored
            else []
        )
    replace_file(file, "".join(lines).encode("utf-8"))
    return True


def replace_file(file: Path, data: bytes) -> None:
    """Write `data` to a temporary file beside `file`, flush it to disk, then rename it over
    `file` (same mode): never a truncated file, whatever is killed when."""
    handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=f".{file.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, file.stat().st_mode & 0o7777)
        os.replace(temporary, file)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    folder = os.open(file.parent, os.O_RDONLY)
    try:
        os.fsync(folder)  # the rename itself survives a power cut
    finally:
        os.close(folder)


def _stable_prefix(exc_msg: str, length: int = 60) -> str:
    # torch rewords its messages between releases: store the start of the first line only,
    # and always mark it as a prefix, so a longer or multi-line message still matches.
    first = exc_msg.splitlines()[0][:length].rstrip()
    return first if first.endswith("...") else first + "..."


def _register_source(snippet: Snippet) -> None:
    """Let tracebacks and warnings quote the snippet's code at its own line numbers.

    A page runs in an empty folder, where the relative path a frame names finds no file:
    anomaly mode's trace of the forward line, a warning's source line, an unexpected error's
    frames would show no code. Output lines stay blank; `mtime` None keeps the entry cached.
    """
    lines: list[str] = []
    for example in snippet.examples:
        code = example.source.splitlines(keepends=True)
        lines += ["\n"] * (example.lineno + len(code) - len(lines))
        lines[example.lineno : example.lineno + len(code)] = code
    linecache.cache[snippet.path] = (len("".join(lines)), None, lines, snippet.path)


def _execute(path: str, example: doctest.Example, namespace: dict[str, Any]) -> Executed:
    # Padding with newlines makes tracebacks point at the snippet file's own line numbers.
    code = compile("\n" * example.lineno + example.source, path, "single", dont_inherit=True)
    namespace.setdefault("__builtins__", builtins)
    buffer = io.StringIO()
    error: BaseException | None = None
    echoed: list[object] = []

    def echo(value: object) -> None:  # echo expression values like the real console
        if value is not None:
            echoed.append(value)
        sys.__displayhook__(value)

    saved_displayhook = sys.displayhook
    sys.displayhook = echo
    try:
        with redirect_stdout(buffer):
            exec(code, namespace)
    except BaseException as exc:  # sys.exit() in a snippet is a failure of that line, too
        error = exc
    finally:
        sys.displayhook = saved_displayhook
    if error is None:
        return Executed(buffer.getvalue(), echoed=bool(echoed))
    return Executed(
        buffer.getvalue(),
        "".join(traceback.format_exception_only(type(error), error)),
        _format_unexpected(path, error),
        bool(echoed),
    )


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
    return shown_safely("".join(line if line.endswith("\n") else line + "\n" for line in lines))


MAX_SHOWN = 200  # lines of a diff or a traceback in a failure: the rest is counted, not shown
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def shown_safely(text: str) -> str:
    """`text` fit for a terminal, a CI log and a page: control characters spelt out (an ANSI
    escape would clear the screen or retitle the window), and cut after MAX_SHOWN lines."""
    lines = text.split("\n")
    if len(lines) > MAX_SHOWN:
        rest = "\n".join(lines[MAX_SHOWN:])
        cut = f"... {len(lines) - MAX_SHOWN} more lines ({len(rest)} characters) not shown"
        lines = [*lines[:MAX_SHOWN], cut, ""]
    return _CONTROL.sub(lambda char: repr(char[0])[1:-1], "\n".join(lines))
