"""The workflows are valid (actionlint), pinned, and run what the README and CI run:
publish.yml on main, pull-request.yml on pull requests with a read-only token."""

import re
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from autograd_traced.plugin import configured
from tests.support.paths import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PUBLISH = WORKFLOWS / "publish.yml"
PULL_REQUEST = WORKFLOWS / "pull-request.yml"
ACTIONLINT = Path(sysconfig.get_path("scripts")) / "actionlint"  # from the test extra
# `uses: owner/repo@<commit>  # v1.2.3`: the release a commit is, for people and for actionlint
PINNED = re.compile(r"@([0-9a-f]{40})  # (v\d+)\.\d+\.\d+$", re.M)


def all_workflows() -> list[Path]:
    return sorted(WORKFLOWS.glob("*.y*ml"))


def actionlint(tmp_path: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    """Lint copies whose pinned actions name their major tag again: actionlint knows the
    inputs of popular actions by tag, so it checks a step's `with:` only then."""
    copies = []
    for path in paths:
        copy = tmp_path / "tagged" / path.name
        copy.parent.mkdir(exist_ok=True)
        copy.write_text(PINNED.sub(r"@\2", path.read_text()))
        copies.append(copy)
    # Without ShellCheck and pyflakes, whether or not a machine has them: the same verdict
    # everywhere.
    command = [ACTIONLINT, "-no-color", "-oneline", "-shellcheck=", "-pyflakes=", *copies]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT)


def test_every_workflow_passes_actionlint(tmp_path: Path) -> None:
    workflows = all_workflows()
    assert {PUBLISH, PULL_REQUEST} <= set(workflows)
    result = actionlint(tmp_path, *workflows)
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
    result = actionlint(tmp_path, broken)
    assert result.returncode == 1
    assert reported in result.stdout


def steps_and_jobs(workflow: Path) -> list[dict[str, Any]]:
    """Every job and every step of one: where a `uses:` can be."""
    jobs: dict[str, Any] = yaml.safe_load(workflow.read_text())["jobs"]
    return [*jobs.values(), *(step for job in jobs.values() for step in job.get("steps", []))]


@pytest.mark.parametrize("workflow", all_workflows(), ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_commit(workflow: Path) -> None:
    """A tag can be moved to other code; a commit cannot. Its comment names the release."""
    text = workflow.read_text()
    uses = [entry["uses"] for entry in steps_and_jobs(workflow) if "uses" in entry]
    assert uses
    for action in uses:
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", action), f"not pinned: {action}"
        assert re.search(rf"{re.escape(action)}  # v\d+\.\d+\.\d+$", text, re.M), action
    checkouts = [
        entry for entry in steps_and_jobs(workflow) if "actions/checkout@" in entry.get("uses", "")
    ]
    for checkout in checkouts:  # no token left in .git for the code that runs next
        assert checkout.get("with", {}).get("persist-credentials") is False


def readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"Set up and run every test.*?```bash\n(.*?)\n```", readme, re.S)
    assert block, "README.md has no test command"
    return block.group(1)


def ci_run_commands() -> list[str]:
    """The lines .ci/run runs (its comments left out)."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_publishing_tests_first_then_deploys_the_strict_build() -> None:
    jobs: dict[str, Any] = yaml.safe_load(PUBLISH.read_text())["jobs"]
    steps = jobs["build"]["steps"]
    runs = [step.get("run", "").strip() for step in steps]
    uses = [step.get("uses", "").split("@")[0] for step in steps]
    order = [
        runs.index(readme_test_command()),  # every page run: the tests read no results cache
        runs.index(".venv/bin/nox -s torch-matrix"),
        uses.index("actions/cache"),  # restored for the build, saved after the job
        runs.index(".venv/bin/nox -s docs"),  # the strict build into site/
        uses.index("actions/upload-pages-artifact"),
    ]
    assert order == sorted(order), f"steps out of order: {runs}"
    cache = steps[order[2]]["with"]
    assert cache["path"] == configured(ROOT / "mkdocs.yml").config.cache_dir, "where it is kept"
    assert "hashFiles(" in cache["key"] and cache["key"].startswith(cache["restore-keys"])
    assert steps[order[-1]]["with"]["path"] == "site"
    assert jobs["deploy"]["needs"] == "build"
    assert [step["uses"].split("@")[0] for step in jobs["deploy"]["steps"]] == [
        "actions/deploy-pages"
    ]
    assert readme_test_command() in ci_run_commands()  # CI runs it too


def test_pull_requests_run_the_readme_test_command_read_only() -> None:
    text = PULL_REQUEST.read_text()
    workflow: dict[Any, Any] = yaml.safe_load(text)
    assert workflow[True] == "pull_request"  # YAML 1.1 reads the key `on` as true
    assert workflow["permissions"] == {"contents": "read"}
    jobs: dict[str, Any] = workflow["jobs"]
    assert [name for name, job in jobs.items() if "permissions" in job] == []  # none widens it
    expressions = re.findall(r"\$\{\{(.*?)\}\}", text)
    assert [e for e in expressions if "secrets" in e or "token" in e] == []
    runs = [step.get("run", "").strip() for job in jobs.values() for step in job["steps"]]
    assert "bash .ci/run" in runs
    assert readme_test_command() in ci_run_commands()
    assert workflow["concurrency"]["cancel-in-progress"] is True  # a newer push supersedes
