"""The pages make readers practise: predict before a surprise, find the line in the lab.

- In the two lessons, every snippet that raises or writes into `.grad` comes after a question
  admonition, asked since the snippet before it (the reveal is the executed output).
- In the lab, every section states the symptom and asks for the one check that would find the
  line, then shows the broken program (its real symptom); the check, then the answer, follow
  collapsed, and every fence after the program sits in them. The answer names a checkpoint and
  runs the fixed program, which prints the working program's gradients where the broken one
  did not (a training loop: its last step's gradient equals the hand formula, where the broken
  loop's did not; a batch of its own inputs: its gradients equal its hand values).
"""

import re
from functools import cache
from pathlib import Path

import pytest

from autograd_traced.fences.grammar import Fence, executable_fences
from autograd_traced.running.pages import shared_runner
from autograd_traced.running.plan import plan_page_file
from tests.support.paths import LAB, LESSONS, MIN_LAB_EXERCISES, ROOT

QUESTION = '!!! question "'
CHECK = '??? tip "'  # collapsed: the diagnostic, before the answer
ANSWER = '??? success "'
CHECKPOINT_RE = re.compile(r"\*\*Checkpoint [123], ")
# A loop's step, printed beside the hand formula: "step 2: b.grad = -0.0696   a - y = -0.0696".
BY_HAND_RE = re.compile(
    r"^step \d+: (?:b|w1)\.grad = (?P<grad>\S+)   (?:a - y|x1 \(a - y\)) = (?P<hand>\S+)$"
)


def surprises(text: str) -> bool:
    """A snippet whose output the reader should predict: it raises or changes a .grad."""
    code = [line[4:] for line in text.splitlines() if line.startswith((">>> ", "... "))]
    changes_grad = re.compile(r"\.backward\(|zero_grad\(|^\s*[\w.]+\.grad = ")
    return "Traceback (most recent call last)" in text or any(
        changes_grad.search(line) for line in code
    )


def snippet_fences(markdown: str) -> list[Fence]:
    return [fence for fence in executable_fences(markdown) if fence.language == "pycon"]


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.name)
def test_a_question_comes_before_each_surprise(page: Path) -> None:
    markdown = page.read_text()
    previous_end = 0
    for fence in snippet_fences(markdown):
        path = fence.options["file"]
        before = markdown[previous_end : fence.start]
        previous_end = fence.end
        if surprises((ROOT / path).read_text()):
            assert QUESTION in before, f"{page.name}: no question before {path}"


@cache
def outputs_by_snippet(page: Path) -> dict[str, str]:
    run = shared_runner().run_page(plan_page_file(ROOT, page))
    assert not run.failures, "the page fails: its snippet tests say why"
    return {
        result.options["file"]: "\n".join(r.output for r in result.runs)
        for result in run.results
        if result.language == "pycon"
    }


def lab_exercises(markdown: str) -> list[str]:
    """The numbered sections of the lab ("## 1. ..."), each as its Markdown."""
    return re.split(r"^(?=## \d+\. )", markdown, flags=re.MULTILINE)[1:]


def test_the_lab_has_enough_exercises() -> None:
    assert len(lab_exercises(LAB.read_text())) >= MIN_LAB_EXERCISES


def test_the_home_page_says_how_many_exercises_the_lab_has() -> None:
    words = {12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen"}
    count = len(lab_exercises(LAB.read_text()))
    assert f"{words[count]} broken versions" in (ROOT / "docs" / "index.md").read_text()


@pytest.mark.parametrize("index", range(len(lab_exercises(LAB.read_text()))))
def test_each_lab_exercise_shows_a_symptom_asks_and_answers(index: int) -> None:
    markdown = LAB.read_text()
    exercise = lab_exercises(markdown)[index]
    heading = exercise.splitlines()[0]
    fences = snippet_fences(exercise)
    assert len(fences) >= 2, f"{heading}: a broken program and, in the answer, the fixed one"
    broken, fixed = (fences[i].options["file"] for i in (0, -1))
    question, check, answer = (exercise.find(mark) for mark in (QUESTION, CHECK, ANSWER))
    assert -1 < question < fences[0].start, f"{heading}: the symptom and question come first"
    assert "Which one check" in exercise[question:], f"{heading}: ask for the check first"
    assert fences[0].end < check < answer < fences[-1].start, (
        f"{heading}: the program, then the collapsed check, then the answer holding the fix"
    )
    assert not fences[0].indent, f"{heading}: the program shows before the check"
    for fence in fences[1:]:
        assert fence.indent, f"{heading}: checks and fixes belong in the collapsed blocks"
    assert CHECKPOINT_RE.search(exercise[answer:]), f"{heading}: the answer names no checkpoint"

    outputs = outputs_by_snippet(LAB)
    last_line = outputs[fixed].strip().splitlines()[-1]
    if agrees := BY_HAND_RE.search(last_line):  # a training loop: its own step's hand value
        assert agrees["grad"] == agrees["hand"], f"{heading}: {fixed} {last_line}"
        symptom = BY_HAND_RE.search(outputs[broken].strip().splitlines()[-1])
        assert symptom is None or symptom["grad"] != symptom["hand"], f"{heading}: no symptom"
        return
    # The working program's gradients; a program on inputs of its own (a batch) prints its
    # hand values last, which its own gradients must equal.
    own_inputs = last_line.startswith("by hand: ")
    working = outputs[fixed if own_inputs else "snippets/find_the_line/working.pycon"]
    expected = re.search(r"b\.grad = (\S+)   w1\.grad = (\S+)", working)
    assert expected is not None, f"{heading}: {fixed} prints no gradients"
    b_grad, w1_grad = expected.groups()
    # The fixed program's last line states the working gradients (w1's, if it names it).
    stated = dict(re.findall(r"(b\.grad|dL/db|w1\.grad|dL/dw1) = (\S+)", last_line))
    assert stated.get("b.grad", stated.get("dL/db")) == b_grad, f"{heading}: {fixed} {last_line}"
    assert stated.get("w1.grad", stated.get("dL/dw1", w1_grad)) == w1_grad, f"{heading}: {fixed}"
    symptom = outputs[broken]
    assert "Traceback" in symptom or f"b.grad = {b_grad}   w1.grad = {w1_grad}" not in symptom, (
        f"{heading}: {broken} prints the working program's gradients: no symptom"
    )
