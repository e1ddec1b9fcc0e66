"""The results cache: a page's run is reused only for exactly the inputs that produced it, and
an entry that cannot be trusted is ignored with a message, never shown."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from autograd_traced.running import pages, plan, results_cache
from autograd_traced.running.pages import PageRunner
from autograd_traced.running.plan import PagePlan, PageRun, Settings, plan_page_file
from autograd_traced.running.results_cache import ResultsCache

SNIPPET = "snippets/t/sums.pycon"
DIAGRAM = "docs/diagrams/d.dot"
FENCE = f'```pycon exec="on" file="{SNIPPET}"\n```\n'
PAGE = f'# A page\n\n{FENCE}\n```diagram exec="on" file="{DIAGRAM}"\n```\n'


@pytest.fixture
def site(tmp_path: Path) -> Path:
    for path, text in {
        "docs/page.md": PAGE,
        SNIPPET: ">>> print(f'{1 + 1}')\n2\n",
        DIAGRAM: "// alt: two boxes\ndigraph { a -> b }\n",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return tmp_path


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages run in a process of their own (not taken from the cache), in order."""
    calls: list[str] = []
    execute = pages._execute

    def counted(page: PagePlan, *args: object) -> PageRun:
        calls.append(page.page)
        return execute(page, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(pages, "_execute", counted)
    return calls


@pytest.fixture
def messages() -> Iterator[list[str]]:
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("mkdocs.plugins.autograd_traced")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield said
    logger.removeHandler(handler)
    logger.setLevel(level)


def build(site: Path, settings: Settings | None = None) -> PageRun:
    """One build of the page: a fresh process's runner, the site's cache, written at its end."""
    cache = ResultsCache(site / ".cache")
    run = PageRunner().run_page(plan_page_file(site, site / "docs/page.md", settings), cache=cache)
    cache.write()
    return run


def entry(site: Path) -> Path:
    (found,) = (site / ".cache").glob("*.json")
    return found


def test_an_unchanged_page_is_not_run_again_and_shows_the_same(
    site: Path, executed: list[str]
) -> None:
    cold = build(site)
    assert executed == ["docs/page.md"] and not cold.failures
    warm = build(site)
    assert executed == ["docs/page.md"], "the second build ran nothing"
    assert warm.results == cold.results
    assert "2" in warm.results[0].console and "<svg" in warm.results[1].html


def change_page(site: Path) -> None:
    page = site / "docs/page.md"
    page.write_text(PAGE.replace('exec="on" file', 'exec="on" timeout="30" file', 1))


def edit(path: str, old: str, new: str) -> Callable[[Path], None]:
    def change(site: Path) -> None:
        text = (site / path).read_text()
        assert old in text
        (site / path).write_text(text.replace(old, new))

    return change


INPUTS: dict[str, Callable[[Path], None]] = {
    "page": change_page,
    "snippet": edit(SNIPPET, "2\n", "2\n>>> x = 3\n"),
    "transcript": edit(SNIPPET, "2\n", "3\n"),  # an edited output: the verdict fails it
    "diagram": edit(DIAGRAM, "a -> b", "a -> c"),
}


@pytest.mark.parametrize("name", INPUTS)
def test_a_page_whose_file_changed_runs_again(site: Path, executed: list[str], name: str) -> None:
    build(site)
    INPUTS[name](site)
    again = build(site)
    assert executed == ["docs/page.md"] * 2
    assert bool(again.failures) == (name == "transcript")


@pytest.mark.parametrize(
    "other", [Settings(timeout=30), Settings(memory=1024)], ids=["timeout", "memory"]
)
def test_a_page_runs_again_under_other_settings(
    site: Path, executed: list[str], other: Settings
) -> None:
    build(site)
    build(site, other)
    assert len(executed) == 2


@pytest.mark.parametrize("name", sorted(plan.environment()))
def test_a_page_runs_again_in_another_environment(
    site: Path,
    executed: list[str],
    messages: list[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    build(site)
    other = {**plan.environment(), name: "another release"}
    for module in (plan, results_cache):  # as a new Python, torch, numpy... would, everywhere
        monkeypatch.setattr(module, "environment", lambda: other)
    build(site)
    assert len(executed) == 2
    assert not [said for said in messages if "ignored" in said], "another key, not a distrust"


def set_in(data: dict, path: tuple[object, ...], value: object) -> None:  # type: ignore[type-arg]
    for step in path[:-1]:
        data = data[step]  # type: ignore[index]
    data[path[-1]] = value  # type: ignore[index]


def truncate(file: Path) -> None:
    file.write_text(file.read_text()[:100])


def change(path: tuple[object, ...], value: object) -> Callable[[Path], None]:
    def corrupt(file: Path) -> None:
        data = json.loads(file.read_text())
        set_in(data, path, value)
        file.write_text(json.dumps(data))

    return corrupt


CORRUPTIONS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (truncate, "cannot be read as JSON"),
    "not-text": (lambda file: file.write_bytes(b"\xff\xfe\x00"), "cannot be read as JSON"),
    "not-an-entry": (lambda file: file.write_text("[]"), "not an entry of format 1"),
    "another-format": (change(("format",), 0), "not an entry of format 1"),
    "another-torch": (change(("environment", "torch"), "2.14.1"), "torch '2.14.1'"),
    "another-key": (change(("key",), "0" * 64), "another key"),
    "a-forged-output": (
        change(("reports", 0, "executed", 0, "output"), "3\n"),
        "its outputs fail the verdict now",
    ),
    "a-malformed-report": (change(("reports",), [{"html": "<script>"}]), "cannot read it"),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_an_entry_not_to_trust_is_ignored_with_a_message(
    site: Path, executed: list[str], messages: list[str], name: str
) -> None:
    build(site)
    corrupt, why = CORRUPTIONS[name]
    corrupt(entry(site))
    again = build(site)
    assert executed == ["docs/page.md"] * 2, "the page ran again"
    assert not again.failures and "2" in again.results[0].console
    (said,) = [message for message in messages if "ignored" in message]
    assert entry(site).name in said and why in said
    assert json.loads(entry(site).read_text())["format"] == results_cache.FORMAT, "rewritten"


def test_a_failing_page_is_not_kept(site: Path, executed: list[str]) -> None:
    INPUTS["transcript"](site)
    assert build(site).failures
    assert not list((site / ".cache").glob("*.json"))
    assert build(site).failures and len(executed) == 2


def test_a_whole_build_keeps_its_own_entries_and_removes_only_older_ones(site: Path) -> None:
    build(site)
    current = json.loads(entry(site).read_text())["key"]
    folder = site / ".cache"
    (folder / f"{'a' * 64}.json").write_text("{}")  # an entry of an older build
    (folder / "notes.txt").write_text("not the cache's")
    ResultsCache(folder).write(only=[current])
    assert sorted(path.name for path in folder.iterdir()) == [f"{current}.json", "notes.txt"]


def test_the_torch_release_is_recorded_for_a_build_that_runs_nothing(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    cache = ResultsCache(site / ".cache")
    assert cache.release() is None
    assert pages.torch_version(cache) == torch.__version__  # asked of the fork server
    cache.write()
    monkeypatch.setattr(pages, "_server_torch_version", lambda: pytest.fail("asked again"))
    assert pages.torch_version(ResultsCache(site / ".cache")) == torch.__version__
    other = {**plan.environment(), "torch": "2.14.1"}
    monkeypatch.setattr(results_cache, "environment", lambda: other)
    assert ResultsCache(site / ".cache").release() is None


def test_a_page_cannot_leave_an_entry_in_the_cache(site: Path) -> None:
    # Read-only where Linux allows it (the write fails); elsewhere the source guard sees the
    # file, fails the page and clears the cache. Either way no entry of the page's survives.
    forged = site / ".cache" / f"{'f' * 64}.json"
    forged.parent.mkdir()
    (site / SNIPPET).write_text(
        f">>> import pathlib\n>>> _ = pathlib.Path({str(forged)!r}).write_text('{{}}')\n"
    )
    assert build(site).failures
    assert not forged.exists() and not list(forged.parent.glob("*.json"))


def test_a_cache_that_cannot_be_written_is_said_and_the_build_goes_on(
    site: Path, messages: list[str]
) -> None:
    (site / "a-file").write_text("")
    cache = ResultsCache(site / "a-file" / "cache")  # a folder that cannot be made
    run = PageRunner().run_page(plan_page_file(site, site / "docs/page.md"), cache=cache)
    cache.write()
    assert not run.failures
    assert [said for said in messages if "not written" in said]
