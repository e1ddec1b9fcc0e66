"""A page's program in the forms a reader takes away: the copied console code, a script, a notebook.

Pure functions over `Cell`s, one per executed `>>>` example in page order, grouped in one tuple
per console block. They only read what the build printed; nothing here runs code. A page of
many small programs (the pitfalls, the lab) gets one section per heading; the lab's answers
are left out by the caller, and the files say so.

- `console_code`: what the copy button gives, the code only, as the Python console takes it.
- `script_text`: a `.py` file that runs to the end: an echoed value is printed, the expected
  error is caught and printed.
- `notebook_json`: a Jupyter notebook carrying the build's outputs; the expected error's cell
  is tagged `raises-exception`, so the notebook executes to the end.
"""

from __future__ import annotations

import ast
import builtins
import codeop
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from autograd_traced.running.snippets import SHOWN_TRACEBACK, ExampleRun

# How snippets.run_snippet shows an expected error after what the example printed before it.
RAISES_TAG = "raises-exception"  # nbclient and Jupyter go on after a cell with this tag fails
ANSWERS_LEFT_OUT = (
    "Its checks and answers are left out: find the line first, then open them on the page."
)


@dataclass(frozen=True)
class Cell:
    """One `>>>` example as the build ran it."""

    snippet: str  # the .pycon file it comes from
    source: str  # the code after the prompts
    output: str  # what it printed, the console's echo of a value included
    error: str | None = None  # an expected exception, as its last line: "RuntimeError: ..."
    section: str = ""  # the title of the page's heading the block sits under
    echoed: bool = False  # the console echoed a value, as the runner saw it

    @property
    def echoes(self) -> bool:
        """The console printed the value of the last statement, an expression (not what a
        print() call, or a function called, wrote)."""
        if self.error is not None or not self.echoed:
            return False
        return isinstance(_last_statement(self.source), ast.Expr)


Console = tuple[Cell, ...]  # one console block of the page


def cells_from_runs(snippet: str, runs: Sequence[ExampleRun], section: str = "") -> Console:
    """The cells of one console block, from the runner's results (or the stored transcript)."""
    cells = []
    for run in runs:
        if run.example.exc_msg is None:
            cells.append(Cell(snippet, run.source, run.output, None, section, run.echoed))
        else:
            printed, _, error = run.output.partition(SHOWN_TRACEBACK)
            cells.append(Cell(snippet, run.source, printed, error.rstrip("\n"), section))
    return tuple(cells)


def console_code(console: Console) -> str:
    """The block's code without prompts or outputs, ready to paste into `python` (or a file).

    The console runs a compound statement once it reads an empty line, so one follows it.
    """
    lines = []
    for cell in console:
        source = cell.source.rstrip("\n")
        lines.append(source)
        if _console_waits_for_more(source):
            lines.append("")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=4096)
def _console_waits_for_more(source: str) -> bool:
    """Whether the console reads more lines after `source` before it runs it (a compound
    statement): kept, because a block's code is asked for by its fence and by its copy text."""
    return codeop.compile_command(source, symbol="single") is None


def script_text(
    title: str, consoles: Sequence[Console], torch_version: str, *, answers_left_out: bool = False
) -> str:
    """The page's program as a script that runs to the end and prints what the page shows."""
    parts = [
        f'"""{title}: the program of this page, as a script.\n\n'
        f"Generated when the site was built, from the page's console blocks in page order.\n"
        f"It prints what the page shows (PyTorch {torch_version}); the errors the page\n"
        f"explains are caught and printed, so the script runs to the end."
        + ("\n" + ANSWERS_LEFT_OUT if answers_left_out else "")
        + '"""\n'
    ]
    for section, console in _with_new_sections(consoles):
        heading = f"# {'=' * 4} {section}\n" if section else ""
        body = "\n".join(_script_lines(cell) for cell in console)
        parts.append(f"{heading}# {console[0].snippet}\n{body}\n")
    return "\n".join(parts)


def notebook_json(
    title: str, consoles: Sequence[Console], torch_version: str, *, answers_left_out: bool = False
) -> str:
    """The page's program as a notebook, with the build's outputs in it."""
    intro = (
        f"# {title}\n\nThe program of this page, generated when the site was built, with the "
        f"outputs it printed then (PyTorch {torch_version}), one section per heading of the "
        f"page; run the cells in order. A cell tagged `{RAISES_TAG}` raises an error the page "
        "explains." + (" " + ANSWERS_LEFT_OUT if answers_left_out else "")
    )
    cells = [_markdown_cell(intro)]
    count = 0
    for section, console in _with_new_sections(consoles):
        if section:
            cells.append(_markdown_cell(f"## {section}"))
        cells.append(_markdown_cell(f"From `{console[0].snippet}`"))
        for group in _notebook_groups(console):
            count += 1
            cells.append(_code_cell(group, count))
    for index, cell in enumerate(cells):
        cell["id"] = f"cell-{index}"  # nbformat draws random ids: builds must be reproducible
    # Imported here, not with the plugin: 90 ms (jsonschema) a build would otherwise pay
    # before it starts the process that imports torch.
    import nbformat

    # Cells made as nbformat.v4's new_* make them, without their check of each cell: the
    # whole notebook is checked once (0.3 s a build, most of it those checks).
    notebook = nbformat.from_dict(
        {
            "nbformat": nbformat.v4.nbformat,
            "nbformat_minor": nbformat.v4.nbformat_minor,
            "metadata": {
                "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                "language_info": {"name": "python"},
            },
            "cells": cells,
        }
    )
    nbformat.validate(notebook)
    return nbformat.v4.writes(notebook)  # nbformat.writes would check it again


def _with_new_sections(consoles: Sequence[Console]) -> list[tuple[str, Console]]:
    """Each console with its section's title, given only where a new section starts."""
    previous, paired = "", []
    for console in consoles:
        section = console[0].section
        paired.append((section if section != previous else "", console))
        previous = section
    return paired


def _script_lines(cell: Cell) -> str:
    source = cell.source.rstrip("\n")
    if cell.error is not None:
        name = cell.error.partition(":")[0]
        caught = name if isinstance(getattr(builtins, name, None), type) else "Exception"
        return (
            "try:\n"
            + "".join(f"    {line}\n" for line in source.split("\n"))
            + f"except {caught} as error:  # expected: the page explains this error\n"
            + '    print(f"{type(error).__name__}: {error}")'
        )
    if not cell.echoes:
        return source
    # The console echoes the value of an expression; a script has to print it.
    expression = _last_statement(source)
    assert expression is not None
    lines = source.split("\n")
    start, end = expression.lineno - 1, (expression.end_lineno or expression.lineno) - 1
    before = "\n".join(lines[:start])
    head = lines[start][: expression.col_offset]
    text = ast.get_source_segment(source, expression)
    tail = lines[end][expression.end_col_offset :]
    printed = f"{head}print({text}){tail}"
    return f"{before}\n{printed}" if before else printed


def _notebook_groups(console: Console) -> list[Console]:
    """Consecutive cells up to one that printed: a notebook shows only a cell's last value."""
    groups: list[list[Cell]] = [[]]
    for cell in console:
        groups[-1].append(cell)
        if cell.output or cell.error is not None:
            groups.append([])
    return [tuple(group) for group in groups if group]


def _markdown_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _code_cell(group: Console, count: int) -> dict[str, Any]:
    last = group[-1]
    outputs: list[dict[str, Any]] = []
    if last.echoes:
        outputs.append(
            {
                "output_type": "execute_result",
                "metadata": {},
                "data": {"text/plain": last.output.rstrip("\n")},
                "execution_count": count,
            }
        )
    elif last.output:
        outputs.append({"output_type": "stream", "name": "stdout", "text": last.output})
    metadata = {}
    if last.error is not None:
        name, _, value = last.error.partition(": ")
        outputs.append(
            {
                "output_type": "error",
                "ename": name,
                "evalue": value,
                "traceback": last.error.split("\n"),
            }
        )
        metadata["tags"] = [RAISES_TAG]
    source = "\n".join(cell.source.rstrip("\n") for cell in group)
    return {
        "cell_type": "code",
        "metadata": metadata,
        "execution_count": count,
        "source": source,
        "outputs": outputs,
    }


def _last_statement(source: str) -> ast.stmt | None:
    body = ast.parse(source).body
    return body[-1] if body else None
