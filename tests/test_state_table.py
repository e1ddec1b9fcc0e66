"""The line-by-line state table for the article's program."""

import doctest

import torch

from autograd_traced.snippets import ExampleRun
from autograd_traced.state_table import StateTable


def trace(source: str, namespace: dict[str, object] | None = None) -> StateTable:
    namespace = {} if namespace is None else namespace
    table = StateTable()
    table.start(namespace)
    for example in doctest.DocTestParser().get_examples(source):
        exec(example.source, namespace)
        table.observe(ExampleRun(example, ""), namespace)
    return table


PROGRAM = """
>>> import torch
>>> b = torch.tensor(0.0, requires_grad=True)
>>> w1 = torch.tensor(2.2, requires_grad=True)
>>> x1 = torch.tensor(1.1)
>>> z = x1 * w1 + b
>>> z.backward()
"""


def test_one_row_per_line_with_autograd_state() -> None:
    rows = trace(PROGRAM).rows
    assert [row.variable for row in rows] == ["torch", "b", "w1", "x1", "z", ""]
    z = rows[4]
    assert (z.value, z.requires_grad, z.is_leaf, z.grad_fn) == (
        "2.4200",
        "True",
        "False",
        "AddBackward0",
    )
    x1 = rows[3]
    assert (x1.requires_grad, x1.is_leaf, x1.grad_fn) == ("False", "True", "None")
    assert rows[0].value == "module torch"


def test_grad_columns_show_the_grad_after_each_line() -> None:
    rows = trace(PROGRAM).rows
    assert rows[4].grads == {"b": "None", "w1": "None"}
    assert rows[5].grads == {"b": "1.0000", "w1": "1.1000"}  # after z.backward()


def test_only_this_snippets_assignments_are_rows() -> None:
    namespace: dict[str, object] = {"w": torch.tensor(1.0, requires_grad=True)}
    rows = trace(">>> v = w * 3\n", namespace).rows
    assert [row.variable for row in rows] == ["v"]
    assert rows[0].grads == {"w": "None"}  # parameters defined earlier still get a column


def test_markdown_table_escapes_and_labels() -> None:
    markdown = trace(PROGRAM).markdown()
    header, _rule, *body = markdown.splitlines()
    assert (
        header == "| line | sets | value | requires_grad | is_leaf | grad_fn | b.grad | w1.grad |"
    )
    assert len(body) == 6
    assert "`z = x1 * w1 + b`" in body[4]
