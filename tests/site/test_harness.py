"""The harness itself: every kind of break turns both the build and the tests red.

The broken copy has one extra page per kind of break (tests/broken_copy.py). The real
`mkdocs build -q` runs on it in the background (tests/conftest.py): quiet and not strict,
the flags under which a warning alone would pass. Its snippet tests run here, in a nested
pytest session. Each test checks that its break was reported by both, naming the page and
the fence's line, the snippet and its line, and the cause. Nothing else may go red: every
failed test is accounted for, so the copy's untouched pages are the control.

The passing copy is built by the real `mkdocs build --strict`: fences in every form run,
and pages that try to leak state into each other print what a fresh process prints.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograd_traced.fences.grammar import executable_fences
from autograd_traced.page_html.consoles import shown_path
from autograd_traced.page_html.takeaways import AS_TEXT
from autograd_traced.tools import local_site
from tests.support import broken_copy
from tests.support.broken_copy import (
    BAD_DOT,
    BAD_REPR,
    BROKEN,
    CRASHES,
    DELETES_BUILTIN,
    DENSE,
    ENDLESS,
    EXITS,
    HOARDS,
    KILLS,
    LINKS_OUTSIDE,
    MARKERS,
    MISSING,
    NO_ALT,
    NO_LONGER_RAISES,
    OUTSIDE,
    PASSING,
    PATCHES_CHECKER,
    PICKLES,
    PWNED,
    RAISES,
    SETUP,
    STRAY_SHOWN,
    UNPARSABLE,
    UNUSED_LINK,
    WRITES_SOURCES,
    WRONG_OUTPUT,
    Copies,
)
from tests.support.build import Build, CommandBuild, build, copy_site_sources
from tests.support.live_processes import running
from tests.support.paths import ROOT

PHASE2 = "snippets/computing_gradients/phase2_backward.pycon"


@dataclass
class Outcomes:
    """A pytest plugin that records each test's outcome."""

    of: dict[str, str] = field(default_factory=dict)  # node id -> passed, failed or skipped

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" or report.outcome != "passed":
            self.of.setdefault(report.nodeid, report.outcome)

    def pages(self, outcome: str) -> list[str]:
        return sorted({node.split("::")[0] for node, got in self.of.items() if got == outcome})


@dataclass(frozen=True)
class PytestRun:
    exit_code: int
    output: str
    outcomes: Outcomes


def run_tests(root: Path, *args: str) -> PytestRun:
    """`pytest docs` in the copy at `root`, in this process (it has torch imported already)."""
    outcomes, output = Outcomes(), io.StringIO()
    with contextlib.redirect_stdout(output):
        exit_code = pytest.main([str(root / "docs"), "-q", "-rs", *args], plugins=[outcomes])
    return PytestRun(int(exit_code), output.getvalue(), outcomes)


@dataclass(frozen=True)
class Run:
    build: Build
    tests: PytestRun
    root: Path


OURS = {f"docs/{name}" for name in [*BROKEN, *PASSING, broken_copy.FENCE_FORMS_PAGE]}
SITE_FAILS = "the site's own pages fail: their own tests say why"


def skip_if_the_site_fails(failed_pages: list[str]) -> None:
    """A break in the real pages is reported once, by their own tests, not again here."""
    if any(page not in OURS for page in failed_pages):
        pytest.skip(SITE_FAILS)


def failed_pages(build: Build) -> list[str]:
    """The pages a build's failures name ("(used by docs/x.md:3)", "docs/x.md:3: ...")."""
    named = re.findall(r"(?:\(used by |^)(docs/[\w/.-]+\.md):\d", build.log, flags=re.M)
    return sorted(set(named))


@pytest.fixture(scope="module")
def broken(copies: Copies) -> Run:
    tests = run_tests(copies.broken)  # while the builds go on in the background
    skip_if_the_site_fails(tests.outcomes.pages("failed"))
    return Run(copies.broken_build.result(), tests, copies.broken)


@dataclass(frozen=True)
class Passing:
    build: Build
    root: Path

    def page(self, name: str) -> str:
        built = self.root / "site" / name.removesuffix(".md") / "index.html"
        return built.read_text()


@pytest.fixture(scope="module")
def passing(copies: Copies) -> Passing:
    result = Passing(copies.passing_build.result(), copies.passing)
    skip_if_the_site_fails(failed_pages(result.build))
    assert result.build.ok, result.build.log
    return result


def assert_both_red(run: Run, *expected: str) -> None:
    assert not run.build.ok, "the build passed a broken page"
    assert run.tests.exit_code == pytest.ExitCode.TESTS_FAILED, run.tests.output
    for needle in expected:
        assert needle in run.build.log, f"build output lacks {needle!r}:\n{run.build.log}"
        assert needle in run.tests.output, f"test output lacks {needle!r}:\n{run.tests.output}"


def test_wrong_expected_output(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{WRONG_OUTPUT}:2 (used by docs/wrong-output.md:9): output differs",
        "-w1.grad = -0.0898   b.grad = -0.0818\n",
        "+w1.grad = -0.0898   b.grad = -0.0817\n",
    )


def test_unexpected_raise(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{RAISES}:2 (used by docs/raises.md:6): unexpected exception",
        "ValueError: snippet",
        f'File "{RAISES}", line 2',
    )


def test_expected_error_that_no_longer_happens(broken: Run) -> None:
    assert_both_red(
        broken, f"{NO_LONGER_RAISES}:6 (used by docs/no-longer-raises.md:6): expected an exception"
    )


def test_a_page_cannot_switch_off_its_own_check(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{PATCHES_CHECKER}:3 (used by docs/patches-checker.md:3): output differs",
        "+what it really prints",
    )


def test_a_page_cannot_run_code_in_the_builds_process(broken: Run) -> None:
    # Its reports are read as JSON: what it smuggles never runs, and the victim stays red.
    assert_both_red(
        broken, f"{PICKLES}:8 (used by docs/pickles.md:3): its process sent a malformed message"
    )
    assert PWNED not in os.environ
    assert f"{WRONG_OUTPUT}:2 (used by docs/wrong-output.md:9): output differs" in broken.build.log


def test_a_page_cannot_write_the_repository(broken: Run) -> None:
    # Read-only for the page's process (a mount namespace, where Linux allows it: as root)
    if os.geteuid() == 0:
        assert_both_red(
            broken,
            f"{WRITES_SOURCES}:4 (used by docs/writes-sources.md:3): unexpected exception",
            "OSError: [Errno 30] Read-only file system",
        )
    else:  # else the source guard names what it did
        assert_both_red(broken, "docs/writes-sources.md: the repository changed", "docs/index.md")
    assert (broken.root / "docs/index.md").read_text() == (ROOT / "docs/index.md").read_text()


def test_a_fence_cannot_name_a_file_outside_the_repository(broken: Run) -> None:
    for page, path in (("outside.md", OUTSIDE), ("links-outside.md", LINKS_OUTSIDE)):
        assert_both_red(broken, f"docs/{page}:3: this pycon fence", f"{path!r} leads outside")


def test_only_the_snippets_pages_use_are_published(passing: Passing) -> None:
    site = passing.root / "site"
    assert (site / (SETUP + AS_TEXT)).read_text() == (passing.root / SETUP).read_text()
    assert not (site / (UNUSED_LINK + AS_TEXT)).exists() and not (site / UNUSED_LINK).exists()


def test_missing_snippet_file(broken: Run) -> None:
    assert_both_red(broken, "docs/missing.md:3: this pycon fence", f"{MISSING!r} does not exist")


def test_unknown_option(broken: Run) -> None:
    assert_both_red(broken, "docs/typo.md:3: this pycon fence", "unknown option sesion='typo'")


def test_misspelt_options_and_values(broken: Run) -> None:
    assert_both_red(
        broken,
        "docs/misspelt.md:3: this pycon fence",
        "unknown option exce='on'; missing exec=\"on\"",
        "docs/misspelt.md:6: this pycon fence",
        "trace='yes' is not one of 'on', 'off'",
        "docs/misspelt.md:9: this pycon fence",
        "missing file=...",
        "docs/misspelt.md:12: this diagram fence",  # the page's last fence
    )


def test_show_code_without_a_question_or_with_a_player(broken: Run) -> None:
    assert_both_red(
        broken,
        "docs/unpaired.md:3: this pycon fence",
        "show='code' needs !!! question \"...\" since the previous fence",
        "docs/unpaired.md:8: this pycon fence",
        "show='code' cannot go with trace='on'",
    )


def test_unreadable_options(broken: Run) -> None:
    assert_both_red(broken, "docs/unquoted.md:3: this pycon fence", "write options as key=")


def test_transcript_that_doctest_cannot_read(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{UNPARSABLE}:2 (used by docs/unparsable.md:3): cannot read the transcript",
        "lacks blank after >>>",
    )


def test_drawing_the_state_fails(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{BAD_REPR}:4 (used by docs/bad-repr.md:3): could not record the state",
        "ValueError: no repr",
    )


def test_broken_hand_made_diagrams(broken: Run) -> None:
    assert_both_red(
        broken,
        f"docs/bad-diagrams.md:3: {BAD_DOT}: dot failed",
        "syntax error in line 2",
        f"docs/bad-diagrams.md:6: {NO_ALT}: no alt text",
    )


def test_a_diagram_graphviz_cannot_finish_is_stopped_at_its_time_limit(broken: Run) -> None:
    assert_both_red(broken, f"docs/dense-diagram.md:3: {DENSE}: dot timed out after 1 s")


def test_system_exit_in_a_snippet(broken: Run) -> None:
    assert_both_red(
        broken, f"{EXITS}:2 (used by docs/exits.md:3): unexpected exception", "SystemExit: 0"
    )


def test_a_snippet_that_ends_its_process(broken: Run) -> None:
    assert_both_red(
        broken, f"{KILLS}:2 (used by docs/kills.md:3): the page's process exited with status 0"
    )


def test_a_crash_is_named_by_its_signal(broken: Run) -> None:
    assert_both_red(
        broken, f"{CRASHES}:2 (used by docs/crashes.md:3): the page's process was killed by SIGSEGV"
    )


def test_a_snippet_that_deletes_a_builtin_fails_at_its_line(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{DELETES_BUILTIN}:2 (used by docs/deletes-builtin.md:3): changes Python's builtins (len)",
    )


def test_a_page_past_its_memory_limit_fails_at_its_line(broken: Run) -> None:
    assert_both_red(
        broken,
        f"{HOARDS}:1 (used by docs/hoards-memory.md:3): unexpected exception (out of memory",
        "MemoryError",
    )


def test_an_endless_loop_is_stopped_at_its_time_limit(broken: Run) -> None:
    # 1 s of CPU time, or 5 s of wall time on a machine too busy to give it that
    assert_both_red(broken, f"{ENDLESS}:2 (used by docs/endless.md:3): timed out after")


def test_a_failed_build_writes_no_page(broken: Run) -> None:
    assert not list((broken.root / "site").rglob("*.html"))
    assert "no page was written" in broken.build.log


def test_later_snippets_of_a_broken_page_are_skipped_not_failed(broken: Run) -> None:
    assert "not run: docs/wrong-output.md:9 failed before it" in broken.tests.output
    assert broken.tests.outcomes.pages("skipped") == ["docs/wrong-output.md"]


def test_only_the_breaks_fail(broken: Run) -> None:
    assert broken.tests.outcomes.pages("failed") == sorted(f"docs/{name}" for name in BROKEN)
    failures = broken.build.log.split("\n\n")
    unexplained = [f for f in failures if "docs/" in f and not any(n in f for n in BROKEN)]
    assert not unexplained, unexplained


def test_strict_and_verbose_builds_fail_too(broken: Run, tmp_path: Path) -> None:
    # In this process: the pages' runs are reused from the snippet tests above.
    for flags in ({}, {"verbose": True}, {"strict": False, "verbose": True}):
        result = build(broken.root, tmp_path / "site", **flags)  # type: ignore[arg-type]
        assert not result.ok, flags
        assert f"{WRONG_OUTPUT}:2 (used by docs/wrong-output.md:9)" in result.log, flags


def test_fences_in_every_form_run_in_build_and_tests(broken: Run, passing: Passing) -> None:
    page = broken_copy.FENCE_FORMS_PAGE
    html = passing.page(page)
    for path in (SETUP, "snippets/computing_gradients/phase1_grad.pycon", PHASE2):
        assert f'">{shown_path(path)}</a></span>' in html, path  # its title links to the snippet
    assert html.count('<figure class="autograd-diagram"') == 2
    assert f'exec="on" file="{MISSING}"' in html  # shown as text
    fences = executable_fences((broken.root / "docs" / page).read_text())
    passed = [n for n, got in broken.tests.outcomes.of.items() if page in n and got == "passed"]
    assert len(passed) == len(fences) == 5


def test_pages_cannot_leak_state_into_each_other(broken: Run, passing: Passing) -> None:
    # Each page changes torch's and Python's settings at its end, then the other one checks
    # them at its start: in the build and in the tests, whichever runs first.
    for page in ("isolation-a.md", "isolation-z.md"):
        html = passing.page(page)
        assert "torch.float32 cpu True" in html and "0.4963 0.8444 0.5488" in html
        assert broken.tests.outcomes.of[f"docs/{page}::line:3,column:1"] == "passed"


def test_nothing_a_page_starts_outlives_it(broken: Run, passing: Passing) -> None:
    # A child, one in a session of its own and a forked loop: after the build and the tests.
    assert passing.page("starts-processes.md")
    deadline = time.monotonic() + 10  # SIGKILLed, but the kernel takes its moment
    while (left := running(MARKERS)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left


def test_printed_markup_is_shown_as_text_never_run(passing: Passing) -> None:
    html = passing.page("markup.md")
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    assert "<script>alert(" not in html


def test_what_a_page_writes_past_its_transcript_is_logged_escaped(passing: Passing) -> None:
    assert "docs/stray-output.md: its process wrote outside the transcripts" in passing.build.log
    for shown in STRAY_SHOWN:
        assert shown in passing.build.log
    for raw in ("\x1b]0;pwned", "\x1b[2J", "\x1b[31m __stderr__", "\x1b[32m child"):
        assert raw not in passing.build.log  # (the log may hold MkDocs' own colours)


def test_broken_links_anchors_and_formulas_fail_the_strict_build(tmp_path: Path) -> None:
    root = broken_copy.make_links(tmp_path / "repo")
    result = build(root, tmp_path / "site")
    skip_if_the_site_fails(failed_pages(result))
    assert not result.ok
    assert "nowhere.md" in result.log
    assert "no-anchor" in result.log
    assert "links.md: KaTeX cannot render '\\\\frac{1}'" in result.log


def test_update_examples_rewrites_outputs_once_per_file_and_refuses_read_only(
    tmp_path: Path,
) -> None:
    # setup.pycon is run by several pages: each must not rewrite it from its own stale line
    # numbers (an output that grows by a line used to delete the examples below it).
    root = copy_site_sources(tmp_path / "repo")
    before = run_tests(root, "--require-snippets")
    shared, read_only = root / SETUP, root / PHASE2
    originals = {shared: shared.read_text(), read_only: read_only.read_text()}
    shared.write_text(
        originals[shared].replace("z = 2.4200   a = 0.9183   loss = 0.0852\n", "wrong\nlines\n")
    )
    read_only.write_text(originals[read_only].replace("b.grad = -0.0817", "b.grad = -0.0818"))
    read_only.chmod(0o444)
    updated = run_tests(root, "--update-examples")
    assert updated.exit_code == pytest.ExitCode.TESTS_FAILED, updated.output
    assert f"updated expected output: {SETUP}" in updated.output
    assert f"{PHASE2}: NOT updated: {PHASE2} is read-only" in updated.output
    assert shared.read_text() == originals[shared]
    assert "-0.0818" in read_only.read_text()
    read_only.chmod(0o644)
    read_only.write_text(originals[read_only])
    again = run_tests(root, "--require-snippets")
    assert again.exit_code == pytest.ExitCode.OK, again.output
    counts = re.compile(r"snippets: \d+ snippet runs, \d+ examples executed")
    assert counts.findall(again.output) == counts.findall(before.output) != []
    assert not list(root.rglob(".*.tmp"))


def test_one_page_alone_gives_the_result_of_the_full_run(broken: Run, copies: Copies) -> None:
    alone = run_tests(copies.broken, "-k", "isolation-z or wrong-output")
    for node, outcome in alone.outcomes.of.items():
        assert broken.tests.outcomes.of[node] == outcome, node
    assert len(alone.outcomes.of) == 5


def test_a_dirty_build_into_a_written_site_runs_the_pages_a_changed_snippet_feeds(
    tmp_path: Path,
) -> None:
    # MkDocs' --dirty skips a page whose Markdown is older than its HTML: the page kept its
    # old output, green, while the published .pycon had the new one.
    root, site = copy_site_sources(tmp_path / "repo"), tmp_path / "site"
    first = CommandBuild.start(root, site, tmp_path / "first.log", "--no-strict").result()
    assert first.ok, first.log
    setup = root / SETUP
    setup.write_text(
        setup.read_text().replace("z = 2.4200   a = 0.9183", "z = 9.9999   a = 0.9183")
    )
    again = CommandBuild.start(root, site, tmp_path / "again.log", "--no-strict", "--dirty")
    dirty = again.result()
    assert not dirty.ok, dirty.log
    assert f"{SETUP}:11 (used by docs/computation-graphs.md:" in dirty.log


CTRL_C = "snippets/ctrl_c/loop.pycon"
LOOP_NAME = "agt-ctrl-c-loop"  # the page's process names itself so the test can see it run


def test_ctrl_c_stops_a_build_at_once_and_names_what_was_running(tmp_path: Path) -> None:
    root = copy_site_sources(tmp_path / "repo")
    (root / CTRL_C).parent.mkdir()
    (root / CTRL_C).write_text(
        f">>> import ctypes\n>>> _ = ctypes.CDLL(None).prctl(15, b'{LOOP_NAME}')\n"
        ">>> while True:\n...     pass\n"
    )
    (root / "docs" / "ctrl-c.md").write_text(
        f'# Ctrl-C\n\n```pycon exec="on" file="{CTRL_C}" timeout="600"\n```\n'
    )
    build_process = subprocess.Popen(
        local_site.build_command(tmp_path / "site", "-q"),
        cwd=root,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        # A terminal's Ctrl-C, even where this suite was started with SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 300
        while not named(LOOP_NAME) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert named(LOOP_NAME), "the looping page never started"
        time.sleep(1)  # inside its loop
        build_process.send_signal(signal.SIGINT)
        output, _ = build_process.communicate(timeout=20)  # not its 600 s limit
    finally:
        build_process.kill()
    assert build_process.returncode != 0
    log = output.decode()
    assert "ERROR   -  interrupted while running " in log, log  # with any other page running
    assert f"{CTRL_C}:3 (used by docs/ctrl-c.md:3)" in log, log
    assert not named(LOOP_NAME)


def named(comm: str) -> list[str]:
    found = []
    for path in Path("/proc").glob("[0-9]*/comm"):
        with contextlib.suppress(OSError):
            if path.read_text().strip() == comm:
                found.append(path.parent.name)
    return found
