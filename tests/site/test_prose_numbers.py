"""Every number the prose states was printed by a snippet on the same page.

The prose may quote a value (z = 2.4200, dL/db = -0.0817), but never invent one: each decimal
number outside code must appear in the real output of that page's snippets.
"""

import re
from pathlib import Path

import pytest

from autograd_traced.fences.grammar import diagram_files, prose
from autograd_traced.running.pages import shared_runner
from autograd_traced.running.plan import PageRun, plan_page_file
from tests.support.paths import DOCS, PAGES, ROOT

NUMBER_RE = re.compile(r"-?\d+\.\d{2,}")


def page_run(page: Path) -> PageRun:
    """The page's run: the same one the snippet tests and the build use."""
    run = shared_runner().run_page(plan_page_file(ROOT, page))
    if run.failures:
        pytest.skip(f"{page.name} fails: its snippet tests say why")
    return run


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_prose_numbers_come_from_the_pages_outputs(page: Path) -> None:
    printed = set(NUMBER_RE.findall(page_run(page).outputs()))
    for number in NUMBER_RE.findall(prose(page.read_text())):
        assert number in printed, f"{page.name} states {number}, which no snippet printed"


def test_the_revealed_answer_is_what_phase_1_printed() -> None:
    """The opening question asks what b.grad holds after grad(); the reveal must match the run."""
    page = DOCS / "computing-gradients.md"
    phase1 = "snippets/computing_gradients/phase1_grad.pycon"
    (result,) = [r for r in page_run(page).results if r.options.get("file") == phase1]
    assert result.runs[-1].source.startswith("print(b.grad")
    assert result.runs[-1].output.split()[0] == "None"
    assert '??? success "Reveal the answer"\n    **`None`.**' in page.read_text()


def test_the_guard_catches_an_invented_number() -> None:
    assert NUMBER_RE.findall(prose("The loss is 0.0853.\n```pycon\n>>> 0.0852\n```\n")) == [
        "0.0853"
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_numbers_in_hand_made_diagrams_come_from_the_pages_that_show_them(page: Path) -> None:
    text = page.read_text()
    if not diagram_files(text):
        return
    printed = set(NUMBER_RE.findall(page_run(page).outputs()))
    for source in diagram_files(text):
        dot = (ROOT / source).read_text()
        # Layout settings (nodesep=0.45, margin) are not claims: skip the default statements.
        labels = re.sub(r"^\s*(graph|node|edge) \[.*$", "", dot, flags=re.MULTILINE)
        for number in NUMBER_RE.findall(labels):
            assert number in printed, f"{source} states {number}; {page.name} printed no such"
