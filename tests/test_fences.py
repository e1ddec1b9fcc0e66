"""Page state: one namespace per page, fresh on every build, never shared between pages."""

from pathlib import Path

import pytest
from markdown_exec import ExecutionError

from autograd_traced import fences


def test_each_page_starts_with_an_empty_namespace(tmp_path: Path) -> None:
    first = fences.begin_page(tmp_path, "docs/a.md")
    first.namespace["loss"] = 1
    second = fences.begin_page(tmp_path, "docs/b.md")
    assert "loss" not in second.namespace
    assert fences.current_page() is second


def test_the_same_page_rebuilt_starts_afresh(tmp_path: Path) -> None:
    # `mkdocs serve` renders a page again on every save: nothing may survive the rebuild.
    fences.begin_page(tmp_path, "docs/a.md").namespace["w1"] = 2.2
    assert "w1" not in fences.begin_page(tmp_path, "docs/a.md").namespace


def test_unknown_option_is_an_error_not_plain_code(tmp_path: Path) -> None:
    state = fences.begin_page(tmp_path, "docs/a.md")
    options = {"exec": "on", "file": "snippets/x.pycon", "sesion": "typo"}
    with pytest.raises(ExecutionError, match="sesion"):
        fences._checked_run(
            "",
            state=state,
            label="snippets/x.pycon",
            options=options,
            allowed={"file"},
            runner=fences._run_pycon,
            stateful=True,
        )


def test_fences_without_exec_are_left_to_superfences() -> None:
    assert not fences.validate("pycon", {"title": "x"}, {}, {}, None)  # type: ignore[arg-type]
