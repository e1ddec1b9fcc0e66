"""Each page's program, downloaded as a script or a notebook, prints what the page shows.

The script and the notebook are the built site's own files; the expected outputs are read from
the built page's console blocks, so the three cannot drift apart unnoticed. The lab's checks
and answers, its collapsed `??? tip` and `??? success` blocks, are left out of its downloads.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograd_traced.page_html.consoles import shown_path
from autograd_traced.page_html.program_files import Cell, console_code, notebook_json, script_text
from tests.support.paths import DOWNLOADABLE, LAB, MIN_LAB_EXERCISES, ROOT, page_html
from tests.support.transcripts import examples, page_transcripts


def download(site: Path, page: Path, suffix: str) -> Path:
    return site / page.stem / f"{page.stem}{suffix}"


# The lab's `??? tip` (the check) and `??? success` (the answer) blocks, collapsed.
ANSWER_OPENS = ('<details class="tip">', '<details class="success">')


def outside_answers(html: str) -> str:
    """The page's HTML without its collapsed checks and answers (nested <details> included)."""
    kept, depth, position = [], 0, 0
    for tag in re.finditer(r"<details\b[^>]*>|</details>", html):
        if depth == 0:
            kept.append(html[position : tag.start()])
        if tag.group() in ANSWER_OPENS and depth == 0:
            depth = 1
        elif depth and tag.group().startswith("<details"):
            depth += 1
        elif depth and tag.group() == "</details>":
            depth -= 1
        elif depth == 0:
            kept.append(tag.group())
        position = tag.end()
    return "".join(kept) + (html[position:] if depth == 0 else "")


def shown_lines(page: Path, site: Path) -> list[str]:
    """What the page's console blocks printed outside its answers, in order, each expected
    error as its last line."""
    lines = []
    for _, transcript in page_transcripts(outside_answers(page_html(site, page))):
        for example in examples(transcript):
            lines += example.printed + ([example.error] if example.error else [])
    return lines


def shown_outputs(cell: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """A cell's outputs but its warnings (stderr), which pages do not show either."""
    outputs = cell.get("outputs", [])
    return [out for out in outputs if out.output_type != "stream" or out.name == "stdout"]


def notebook_lines(notebook: nbformat.NotebookNode) -> list[str]:
    """What the notebook's cells show, in the same form as `shown_lines`."""
    lines = []
    for cell in notebook.cells:
        for output in shown_outputs(cell):
            if output.output_type == "stream":
                lines += output.text.rstrip("\n").split("\n")
            elif output.output_type == "execute_result":
                lines += output.data["text/plain"].split("\n")
            elif output.output_type == "error":
                lines.append(f"{output.ename}: {output.evalue}")
    return lines


@dataclass(frozen=True)
class Ran:
    script: subprocess.CompletedProcess[str]
    notebook: nbformat.NotebookNode  # executed by a fresh Jupyter kernel


@pytest.fixture(scope="session")
def ran(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Ran]:
    """Every article's script and notebook, run side by side (each imports torch afresh)."""
    workdir = tmp_path_factory.mktemp("downloads")
    scripts = {
        page.name: subprocess.Popen(
            [sys.executable, str(download(built_site, page, ".py"))],
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for page in DOWNLOADABLE
    }
    notebooks = {
        page.name: nbformat.read(download(built_site, page, ".ipynb"), 4) for page in DOWNLOADABLE
    }

    async def execute_all() -> None:
        clients = [
            NotebookClient(
                notebook,
                timeout=120,
                kernel_name="python3",
                # A print can reach the kernel's client in two chunks under load: join them,
                # as Jupyter shows them (a chunked "False True None" failed the comparison once).
                coalesce_streams=True,
                resources={"metadata": {"path": str(workdir)}},
            )
            for notebook in notebooks.values()
        ]
        await asyncio.gather(*(client.async_execute() for client in clients))

    # In a thread of its own: in one session with the browser tests, Playwright's sync API keeps
    # an event loop running in this thread, and asyncio.run refuses to start another there.
    with ThreadPoolExecutor(max_workers=1) as thread:
        thread.submit(asyncio.run, execute_all()).result()
    results = {}
    for name, process in scripts.items():
        stdout, stderr = process.communicate(timeout=120)
        script = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        results[name] = Ran(script, notebooks[name])
    return results


@pytest.mark.parametrize("page", DOWNLOADABLE, ids=lambda p: p.name)
def test_page_links_its_script_and_notebook(built_site: Path, page: Path) -> None:
    html = page_html(built_site, page)
    for suffix in (".py", ".ipynb"):
        name = f"{page.stem}{suffix}"
        assert f'<a href="{name}" download>' in html, f"{page.name} does not link {name}"
        assert download(built_site, page, suffix).is_file()


@pytest.mark.parametrize("page", DOWNLOADABLE, ids=lambda p: p.name)
def test_script_runs_to_the_end_and_prints_what_the_page_shows(
    built_site: Path,
    page: Path,
    ran: dict[str, Ran],
) -> None:
    result = ran[page.name].script
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip("\n").split("\n") == shown_lines(page, built_site)


@pytest.mark.parametrize("page", DOWNLOADABLE, ids=lambda p: p.name)
def test_notebook_executes_and_shows_what_the_page_shows(
    built_site: Path,
    page: Path,
    ran: dict[str, Ran],
) -> None:
    stored = nbformat.read(download(built_site, page, ".ipynb"), 4)
    executed = ran[page.name].notebook
    shown = shown_lines(page, built_site)
    assert notebook_lines(executed) == shown, "the notebook, run now, differs from the page"
    assert notebook_lines(stored) == shown, "the outputs stored in the notebook differ"
    for before, after in zip(stored.cells, executed.cells, strict=True):
        kinds = [output.output_type for output in shown_outputs(before)]
        assert kinds == [output.output_type for output in shown_outputs(after)], before.source
        raises = "error" in kinds
        assert raises == ("raises-exception" in before.metadata.get("tags", [])), before.source


def test_the_labs_downloads_leave_its_answers_out(built_site: Path) -> None:
    html = page_html(built_site, LAB)
    answers = {path for path, _ in page_transcripts(html)} - {
        path for path, _ in page_transcripts(outside_answers(html))
    }
    assert len(answers) >= MIN_LAB_EXERCISES, "every exercise's fix is an answer"
    for suffix in (".py", ".ipynb"):
        text = download(built_site, LAB, suffix).read_text()
        assert "answers are left out" in text
        assert not [path for path in answers if path in text], f"an answer in {suffix}"
    assert "checks and answers left out" in html


@pytest.mark.parametrize("page", DOWNLOADABLE, ids=lambda p: p.name)
def test_block_titles_link_to_the_published_snippets(built_site: Path, page: Path) -> None:
    html = page_html(built_site, page)
    links = re.findall(r'<span class="filename"><a href="([^"]+)">(.+?)</a></span>', html)
    paths = [path for path, _ in page_transcripts(html)]
    assert [shown for _, shown in links] == [shown_path(path) for path in paths]
    assert links, f"{page.name} has no linked console block title"
    for (href, _), path in zip(links, paths, strict=True):
        published = (built_site / page.stem / href).resolve()
        assert published.read_bytes() == (ROOT / path).read_bytes(), href


# The pure functions, on cells a page does not have (yet).
LOOP = Cell("s.pycon", "for i in range(2):\n    print(i)\n", "0\n1\n")
ECHO = Cell("s.pycon", "(1,\n 2)  # a tuple\n", "(1, 2)\n", echoed=True)
# A call that prints and returns None: the console echoes nothing, the script adds no print.
CALL = Cell("s.pycon", "def f():\n    print(3)\nf()\n", "3\n")
NONE = Cell("s.pycon", "print('x')\n", "x\n")
FAILS = Cell("s.pycon", "import json; json.loads('{')\n", "", "json.decoder.JSONDecodeError: x")


def test_console_code_ends_a_compound_statement_with_an_empty_line() -> None:
    assert console_code((LOOP, NONE)) == "for i in range(2):\n    print(i)\n\nprint('x')\n"


def test_script_prints_echoed_values_and_catches_the_expected_error(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(script_text("T", [(LOOP, ECHO, CALL, NONE, FAILS)], "0"))
    assert "print((1,\n 2))  # a tuple" in script.read_text()
    assert "\nf()\n" in script.read_text()  # it printed, and echoed nothing: no print() added
    assert "except Exception as error:" in script.read_text()  # not a builtin: no bare name
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("0\n1\n(1, 2)\n3\nx\nJSONDecodeError: ")


def test_notebook_is_reproducible_and_tags_the_expected_error() -> None:
    text = notebook_json("T", [(LOOP, ECHO, CALL, NONE, FAILS)], "0")
    assert text == notebook_json("T", [(LOOP, ECHO, CALL, NONE, FAILS)], "0")
    notebook = nbformat.reads(text, 4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.outputs[-1].output_type for cell in code] == [
        "stream",
        "execute_result",
        "stream",
        "stream",
        "error",
    ]
    assert code[-1].metadata.tags == ["raises-exception"]
