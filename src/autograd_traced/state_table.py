"""Line-by-line state tables: what each executed line of a snippet set, and the autograd state.

The table is filled while the snippet runs (`observe` is called after every example), so it
shows `.grad` as it was *after that line*, not as it ends up.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import markdown
import torch

from autograd_traced.graph import format_value
from autograd_traced.snippets import ExampleRun

NOT_A_TENSOR = "-"


@dataclass(frozen=True)
class Row:
    line: str
    variable: str
    value: str
    requires_grad: str
    is_leaf: str
    grad_fn: str
    grads: dict[str, str]  # parameter name -> its .grad after this line


@dataclass
class StateTable:
    rows: list[Row] = field(default_factory=list)
    _bound: dict[str, object] = field(default_factory=dict)
    _parameters: list[str] = field(default_factory=list)

    def start(self, namespace: dict[str, Any]) -> None:
        """Remember what is already defined, so only this snippet's assignments show."""
        self._bound = dict(namespace)
        self._parameters = [name for name in namespace if _is_parameter(namespace[name])]

    def observe(self, run: ExampleRun, namespace: dict[str, Any]) -> None:
        changed = [
            name
            for name, value in namespace.items()
            if not name.startswith("_") and self._bound.get(name, self) is not value
        ]
        self._bound = dict(namespace)
        self._parameters += [n for n in changed if _is_parameter(namespace[n])]
        grads = {name: _grad(namespace[name]) for name in self._parameters if name in namespace}
        # The code only: the comment is in the transcript beside it, and would widen the table.
        line = run.source.strip().split("\n")[0].split("  #")[0]
        for name in changed or [""]:
            value = namespace.get(name) if name else None
            self.rows.append(_row(line, name, value, grads))
            line = ""  # a line that binds several names gets one row per name

    def markdown(self) -> str:
        parameters = list(self.rows[-1].grads) if self.rows else []
        header = ["line", "sets", "value", "requires_grad", "is_leaf", "grad_fn"]
        header += [f"{name}.grad" for name in parameters]
        lines = [_cells(header), _cells(["---"] * len(header))]
        for row in self.rows:
            cells = [row.line, row.variable, row.value, row.requires_grad, row.is_leaf, row.grad_fn]
            cells += [row.grads.get(name, "") for name in parameters]
            lines.append(_cells([_code(cell) for cell in cells]))
        return "\n".join(lines)

    def html(self) -> str:
        return markdown.markdown(self.markdown(), extensions=["tables"])


def _is_parameter(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.is_leaf and value.requires_grad


def _grad(tensor: torch.Tensor) -> str:
    return "None" if tensor.grad is None else format_value(tensor.grad)


def _row(line: str, name: str, value: object, grads: dict[str, str]) -> Row:
    if isinstance(value, torch.Tensor):
        grad_fn = type(value.grad_fn).__name__ if value.grad_fn is not None else "None"
        return Row(
            line,
            name,
            format_value(value),
            str(value.requires_grad),
            str(value.is_leaf),
            grad_fn,
            grads,
        )
    if not name:  # a line that binds nothing (a print, a call): only the .grad columns
        return Row(line, "", "", "", "", "", grads)
    return Row(line, name, _describe(value), *[NOT_A_TENSOR] * 3, grads)


def _describe(value: object) -> str:
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if callable(value):
        return f"function {getattr(value, '__name__', '')}".strip()
    if isinstance(value, tuple) and all(isinstance(item, torch.Tensor) for item in value):
        return "(" + ", ".join(format_value(item) for item in value) + ",)"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _code(cell: str) -> str:
    return f"`{cell}`" if cell and cell != NOT_A_TENSOR else cell


def _cells(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
