"""The GitHub Pages workflow is valid (actionlint) and runs what the README and CI run."""

import re
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.paths import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PUBLISH = WORKFLOWS / "publish.yml"
ACTIONLINT = Path(sysconfig.get_path("scripts")) / "actionlint"  # from the test extra


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    # Without ShellCheck and pyflakes, whether or not a machine has them: the same verdict
    # everywhere.
    command = [ACTIONLINT, "-no-color", "-oneline", "-shellcheck=", "-pyflakes=", *paths]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT)


def test_every_workflow_passes_actionlint() -> None:
    workflows = sorted(WORKFLOWS.glob("*.y*ml"))
    assert PUBLISH in workflows
    result = actionlint(*workflows)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("old", "new", "reported"),
    [
        ("path: site", "paht: site", 'input "paht" is not defined'),
        ("steps.deployment.outputs", "steps.deploy.outputs", 'property "deploy" is not defined'),
        ("needs: build", "needs: bulid", 'needs job "bulid" which does not exist'),
    ],
)
def test_actionlint_reports_a_broken_workflow(
    tmp_path: Path, old: str, new: str, reported: str
) -> None:
    """Negative proof: the same lint fails a copy of the workflow with one mistake."""
    broken = tmp_path / PUBLISH.name
    text = PUBLISH.read_text()
    assert old in text
    broken.write_text(text.replace(old, new, 1))
    result = actionlint(broken)
    assert result.returncode == 1
    assert reported in result.stdout


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"Set up and run every test.*?```bash\n(.*?)\n```", readme, re.S)
    assert block, "README.md has no test command"
    return block.group(1)


def test_publishing_tests_first_then_deploys_the_strict_build() -> None:
    jobs: dict[str, Any] = yaml.safe_load(PUBLISH.read_text())["jobs"]
    steps = jobs["build"]["steps"]
    runs = [step.get("run", "").strip() for step in steps]
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    order = [
        runs.index(readme_test_command()),
        runs.index(".venv/bin/nox -s torch-matrix"),
        runs.index(".venv/bin/nox -s docs"),  # the strict build into site/
        uses.index("actions/upload-pages-artifact"),
    ]
    assert order == sorted(order), f"steps out of order: {runs}"
    assert steps[order[-1]]["with"]["path"] == "site"
    assert jobs["deploy"]["needs"] == "build"
    assert [step["uses"].split("@")[0] for step in jobs["deploy"]["steps"]] == [
        "actions/deploy-pages"
    ]
    assert readme_test_command() in (ROOT / ".ci" / "run").read_text()  # CI runs it too
