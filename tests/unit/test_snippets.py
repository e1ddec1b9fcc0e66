"""The snippet runner: what passes, and how each kind of failure is reported."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_traced.running.snippets import (
    Snippet,
    SnippetError,
    run_snippet,
    transcript,
    write_updates,
)

PAGE = "docs/example.md"


def load(tmp_path: Path, text: str) -> Snippet:
    (tmp_path / "snippets").mkdir(exist_ok=True)
    (tmp_path / "snippets" / "example.pycon").write_text(text)
    return Snippet.parse("snippets/example.pycon", text, page=PAGE)


def test_matching_output_passes_and_is_shown(tmp_path: Path) -> None:
    snippet = load(tmp_path, ">>> x = 2\n>>> print(x * 3)\n6\n>>> x\n2\n")
    runs = run_snippet(snippet, {}, page=PAGE)
    assert transcript(runs) == ">>> x = 2\n>>> print(x * 3)\n6\n>>> x\n2"


def test_state_is_shared_through_the_namespace(tmp_path: Path) -> None:
    namespace: dict[str, object] = {}
    run_snippet(load(tmp_path, ">>> x = 40\n"), namespace, page=PAGE)
    run_snippet(load(tmp_path, ">>> print(x + 2)\n42\n"), namespace, page=PAGE)


def failure(tmp_path: Path, text: str) -> str:
    """The message of the SnippetError that running `text` must raise."""
    with pytest.raises(SnippetError) as raised:
        run_snippet(load(tmp_path, text), {}, page=PAGE)
    return str(raised.value)


def test_wrong_output_names_file_line_page_and_diff(tmp_path: Path) -> None:
    message = failure(tmp_path, ">>> x = 2\n>>> print(x * 3)\n7\n")
    assert message.startswith("snippets/example.pycon:2 (used by docs/example.md): output differs")
    assert "-7\n+6\n" in message


def test_unexpected_exception_points_at_the_snippet_line(tmp_path: Path) -> None:
    message = failure(tmp_path, ">>> x = 1\n>>> raise ValueError('boom')\n")
    assert message.startswith("snippets/example.pycon:2 (used by docs/example.md): unexpected")
    assert 'File "snippets/example.pycon", line 2' in message
    assert "ValueError: boom" in message


def test_frames_quote_the_snippets_code_from_an_empty_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page runs in an empty folder: its frames (anomaly mode's forward trace, a warning,
    an error) still quote the code at the snippet's lines, without prompts."""
    (tmp_path / "page").mkdir()
    monkeypatch.chdir(tmp_path / "page")
    stack = ">>> import traceback\n>>> def f():\n...     return traceback.format_stack()\n...\n"
    shown = ">>> print(f()[-1].splitlines()[-1].strip())\nreturn traceback.format_stack()\n"
    run_snippet(load(tmp_path, stack + shown), {}, page=PAGE)
    raises = ">>> x = 1\n>>> def f():\n...     raise ValueError(x)\n...\n>>> f()\n"
    message = failure(tmp_path, raises)
    assert "line 5, in <module>\n    f()\n" in message
    assert "line 3, in f\n    raise ValueError(x)\n" in message


def test_a_run_says_whether_the_console_echoed_a_value(tmp_path: Path) -> None:
    """A function that prints and returns None echoes nothing: a script must not print it."""
    text = ">>> def f():\n...     print(3)\n...\n>>> f()\n3\n>>> 2 + 2\n4\n>>> None\n"
    runs = run_snippet(load(tmp_path, text), {}, page=PAGE)
    assert [run.echoed for run in runs] == [False, False, True, False]


def test_expected_exception_matches_on_a_stable_prefix(tmp_path: Path) -> None:
    text = (
        ">>> raise RuntimeError('Trying to backward twice, worded differently in 2.x')\n"
        "Traceback (most recent call last):\n  ...\nRuntimeError: Trying to backward...\n"
    )
    runs = run_snippet(load(tmp_path, text), {}, page=PAGE)
    # The reader sees the real, full message, not the stored prefix.
    assert runs[0].output.endswith(
        "RuntimeError: Trying to backward twice, worded differently in 2.x\n"
    )


def test_a_different_exception_fails(tmp_path: Path) -> None:
    text = ">>> 1 / 0\nTraceback (most recent call last):\n  ...\nRuntimeError: x...\n"
    with pytest.raises(SnippetError, match="raised a different exception"):
        run_snippet(load(tmp_path, text), {}, page=PAGE)


def test_a_missing_exception_fails(tmp_path: Path) -> None:
    text = ">>> 1 + 1\nTraceback (most recent call last):\n  ...\nRuntimeError: x...\n"
    with pytest.raises(SnippetError, match="expected an exception, none was raised"):
        run_snippet(load(tmp_path, text), {}, page=PAGE)


def test_an_empty_snippet_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SnippetError, match="no '>>>' examples found"):
        load(tmp_path, "just prose\n")


def test_update_rewrites_only_changed_outputs(tmp_path: Path) -> None:
    text = ">>> x = 2  # kept as written\n>>> print(x)\n3\n>>> print('a\\n\\nb')\nold\n>>> x\n2\n"
    snippet = load(tmp_path, text)
    runs = run_snippet(snippet, {}, page=PAGE, update=True)
    assert write_updates(tmp_path, snippet, runs)
    updated = (tmp_path / snippet.path).read_text()
    assert updated == (
        ">>> x = 2  # kept as written\n>>> print(x)\n2\n"
        ">>> print('a\\n\\nb')\na\n<BLANKLINE>\nb\n>>> x\n2\n"
    )
    # The rewritten transcript now passes as it stands.
    run_snippet(load(tmp_path, updated), {}, page=PAGE)


def update_once(tmp_path: Path, text: str) -> str:
    """Rewrite the snippet from what it prints; then it must pass as it stands, unchanged."""
    snippet = load(tmp_path, text)
    runs = run_snippet(snippet, {}, page=PAGE, update=True)
    write_updates(tmp_path, snippet, runs)
    updated = (tmp_path / snippet.path).read_bytes()
    again = Snippet.parse(snippet.path, updated.decode(), page=PAGE)
    assert not write_updates(tmp_path, again, run_snippet(again, {}, page=PAGE, update=True))
    run_snippet(again, {}, page=PAGE)  # passes without updating
    return updated.decode()


@pytest.mark.parametrize(
    ("code", "stored"),
    [
        ("raise ValueError('short')", "ValueError: short..."),
        ("raise ValueError('first line\\nsecond line')", "ValueError: first line..."),
        ("raise KeyError('x' * 90)", "KeyError: '" + "x" * 49 + "..."),
    ],
    ids=["short", "multi-line", "long"],
)
def test_update_stores_exception_messages_that_match_next_time(
    tmp_path: Path, code: str, stored: str
) -> None:
    text = f">>> {code}\nTraceback (most recent call last):\n  ...\nValueError: old...\n"
    assert update_once(tmp_path, text).endswith(f"  ...\n{stored}\n")


@pytest.mark.parametrize(
    ("code", "stored"),
    [
        ("print('a\\n\\nb')", "a\n<BLANKLINE>\nb"),
        ("print('ends in spaces   ')", "ends in spaces   "),
        ("print('x\\n   \\ny')", "x\n<BLANKLINE>\ny"),
    ],
    ids=["blank-line", "trailing-whitespace", "whitespace-only-line"],
)
def test_update_stores_outputs_that_match_next_time(tmp_path: Path, code: str, stored: str) -> None:
    assert update_once(tmp_path, f">>> {code}\nold\n") == f">>> {code}\n{stored}\n"


def test_update_keeps_crlf_line_endings_and_every_other_byte(tmp_path: Path) -> None:
    text = ">>> x = 2  # kept\r\n>>> print(x)\r\n3\r\n>>> x\r\n2\r\n"
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets" / "example.pycon").write_bytes(text.encode())
    snippet = Snippet.parse("snippets/example.pycon", text.replace("\r\n", "\n"), page=PAGE)
    assert write_updates(tmp_path, snippet, run_snippet(snippet, {}, page=PAGE, update=True))
    assert (tmp_path / snippet.path).read_bytes() == text.replace("\r\n3\r\n", "\r\n2\r\n").encode()


def test_a_transcript_doctest_cannot_read_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(SnippetError, match=r"example\.pycon:2 \(used by .*lacks blank after >>>"):
        load(tmp_path, ">>> x = 1\n>>>x = 2\n")


def test_system_exit_is_a_failure_of_its_line(tmp_path: Path) -> None:
    message = failure(tmp_path, ">>> import sys\n>>> sys.exit()\n")
    assert message.startswith("snippets/example.pycon:2 (used by docs/example.md): unexpected")
    assert "SystemExit" in message


def test_update_puts_a_compound_statements_output_after_its_closing_prompt(
    tmp_path: Path,
) -> None:
    text = ">>> for i in range(2):\n...     print(i)\n...\n7\n>>> x = 1\n"
    assert (
        update_once(tmp_path, text)
        == ">>> for i in range(2):\n...     print(i)\n...\n0\n1\n>>> x = 1\n"
    )


def test_a_byte_order_mark_does_not_hide_the_first_example(tmp_path: Path) -> None:
    snippet = load(tmp_path, "\ufeff>>> x = 2\n>>> x\n2\n")
    assert [example.source for example in snippet.examples] == ["x = 2\n", "x\n"]


def test_update_refuses_a_read_only_snippet(tmp_path: Path) -> None:
    snippet = load(tmp_path, ">>> print(2)\n3\n")
    (tmp_path / snippet.path).chmod(0o444)
    with pytest.raises(PermissionError, match=r"example\.pycon is read-only"):
        write_updates(tmp_path, snippet, run_snippet(snippet, {}, page=PAGE, update=True))
    assert (tmp_path / snippet.path).read_text() == ">>> print(2)\n3\n"


KILLED_WRITER = """
import sys
from pathlib import Path
from autograd_traced.running.snippets import replace_file
print("ready", flush=True)
replace_file(Path(sys.argv[1]), b"new" * 30_000_000)
"""


@pytest.mark.parametrize("after", [0.0, 0.02, 0.05, 0.1, 0.2])
def test_a_write_killed_at_any_moment_leaves_the_old_or_the_new_file(
    tmp_path: Path, after: float
) -> None:
    file = tmp_path / "example.pycon"
    file.write_bytes(b"old")
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(file)], stdout=subprocess.PIPE
    )
    assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
    time.sleep(after)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    assert file.read_bytes() in (b"old", b"new" * 30_000_000)


def test_a_failure_shows_control_characters_spelt_out_and_long_diffs_cut(tmp_path: Path) -> None:
    snippet = load(tmp_path, ">>> print('\\x1b[2J\\x1b]0;pwned\\x07' + 'x\\n' * 10_000)\nshort\n")
    with pytest.raises(SnippetError) as raised:
        run_snippet(snippet, {}, page=PAGE)
    message = str(raised.value)
    assert "\x1b" not in message and "\x07" not in message
    assert "+\\x1b[2J\\x1b]0;pwned\\x07x" in message
    assert message.count("\n") < 220
    assert "... 9806 more lines (29414 characters) not shown" in message


def test_a_traceback_shows_control_characters_spelt_out(tmp_path: Path) -> None:
    snippet = load(tmp_path, ">>> raise ValueError('\\x1b[31mred')\n")
    with pytest.raises(SnippetError, match=r"ValueError: \\x1b\[31mred"):
        run_snippet(snippet, {}, page=PAGE)


def test_a_snippet_that_changes_a_builtin_fails_at_its_line_and_they_are_put_back(
    tmp_path: Path,
) -> None:
    message = failure(tmp_path, ">>> import builtins\n>>> del builtins.len\n>>> len('ab')\n2\n")
    assert message.startswith("snippets/example.pycon:2 (used by docs/example.md): changes")
    assert "builtins (len)" in message
    assert len("ab") == 2  # put back for the code that reports it


def test_echoing_a_value_is_not_a_change_of_builtins(tmp_path: Path) -> None:
    runs = run_snippet(load(tmp_path, ">>> 1 + 1\n2\n>>> _\n2\n"), {}, page=PAGE)
    assert [run.output for run in runs] == ["2\n", "2\n"]
