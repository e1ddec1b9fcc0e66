"""Every number the prose states was printed by a snippet on the same page.

The prose may quote a value (z = 2.4200, dL/db = -0.0817), but never invent one: each decimal
number outside code must appear in the real output of that page's snippets.
"""

import re
from pathlib import Path

import pytest

from autograd_traced.snippets import Snippet, run_snippet, snippet_paths
from tests.paths import DOCS, PAGES, ROOT

NUMBER_RE = re.compile(r"-?\d+\.\d{2,}")
FENCED_CODE_RE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def run_page(page: Path) -> tuple[dict[str, object], str]:
    """The page's namespace after all its snippets, and everything they printed."""
    namespace: dict[str, object] = {}
    outputs: list[str] = []
    for path in snippet_paths(page.read_text()):
        snippet = Snippet.load(ROOT, path, page=page.name)
        outputs += [run.output for run in run_snippet(snippet, namespace, page=page.name)]
    return namespace, "\n".join(outputs)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_prose_numbers_come_from_the_pages_outputs(page: Path) -> None:
    prose = FENCED_CODE_RE.sub("", page.read_text())
    _, outputs = run_page(page)
    printed = set(NUMBER_RE.findall(outputs))
    for number in NUMBER_RE.findall(prose):
        assert number in printed, f"{page.name} states {number}, which no snippet printed"


def test_the_revealed_answer_is_what_phase_1_printed() -> None:
    """The opening question asks what b.grad holds after grad(); the reveal must match the run."""
    page = DOCS / "computing-gradients.md"
    phase1 = Snippet.load(ROOT, "snippets/computing_gradients/phase1_grad.pycon", page=page.name)
    namespace: dict[str, object] = {}
    for path in snippet_paths(page.read_text()):
        snippet = Snippet.load(ROOT, path, page=page.name)
        runs = run_snippet(snippet, namespace, page=page.name)
        if path == phase1.path:
            break
    assert runs[-1].source.startswith("print(b.grad")
    assert runs[-1].output.split()[0] == "None"
    assert '??? success "Reveal the answer"\n    **`None`.**' in page.read_text()


def test_the_guard_catches_an_invented_number(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("The loss is 0.0853.\n")
    prose = FENCED_CODE_RE.sub("", page.read_text())
    assert NUMBER_RE.findall(prose) == ["0.0853"]


def test_numbers_in_hand_made_diagrams_come_from_the_pages_that_show_them() -> None:
    for page in PAGES:
        text = page.read_text()
        _, outputs = run_page(page)
        printed = set(NUMBER_RE.findall(outputs))
        for source in re.findall(r'file="(docs/diagrams/[^"]+\.dot)"', text):
            dot = (ROOT / source).read_text()
            # Layout settings (nodesep=0.45, margin) are not claims: skip the default statements.
            labels = re.sub(r"^\s*(graph|node|edge) \[.*$", "", dot, flags=re.MULTILINE)
            for number in NUMBER_RE.findall(labels):
                assert number in printed, f"{source} states {number}; {page.name} printed no such"
