"""The real site builds strictly, and every executable fence left its output on the page."""

import json
import os
import re
import struct
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
import torch
from mkdocs.config import load_config

from autograd_traced.fences.grammar import executable_fences, snippet_files
from autograd_traced.page_html.consoles import shown_path
from tests.support.broken_copy import Copies
from tests.support.build import Build
from tests.support.faked_clock import FAKED_CLOCK, FAKETIME, FakedClockBuild
from tests.support.paths import DOCS, PAGES, ROOT, page_html


def git(*args: str) -> str:
    env = {**os.environ, "TZ": "UTC"}  # the commit's day in UTC, as the sitemap gives it
    command = ["git", "-C", str(ROOT), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout


def test_strict_build_passes_without_warnings(site_build: tuple[Path, Build]) -> None:
    _, result = site_build
    # A record's first line names its level; the lines after it (a page's relayed output:
    # the lab's snippets raise a torch UserWarning on purpose) belong to it.
    records = re.split(r"\n(?=[A-Z]+ +- )", result.log.strip())
    problems = [record for record in records if not record.startswith("INFO")]
    assert result.ok and not problems, "\n".join(problems)
    assert "Documentation built" in result.log


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_executable_fence_rendered(built_site: Path, page: Path) -> None:
    markdown, html = page.read_text(), page_html(built_site, page)
    for path in snippet_files(markdown):
        assert f'">{shown_path(path)}</a></span><pre>' in html, f"{path} shows no transcript"
    figures = len([f for f in executable_fences(markdown) if f.language != "pycon"])
    assert html.count('<figure class="autograd-diagram"') == figures
    assert html.count("<svg") >= figures


def test_articles_show_outputs_and_expected_error(built_site: Path) -> None:
    graphs, gradients = (
        page_html(built_site, DOCS / name)
        for name in ("computation-graphs.md", "computing-gradients.md")
    )
    assert "z = 2.4200   a = 0.9183   loss = 0.0852" in graphs
    assert "RuntimeError: Trying to backward through the graph a second time" in graphs
    assert "w1.grad = -0.0898   b.grad = -0.0817" in gradients
    for html in (graphs, gradients):  # the setup's player, its script and its style
        assert 'id="trace-setup"' in html
        assert 'id="trace-setup-line-12"' in html
        assert "javascripts/tracer.js" in html and "stylesheets/tracer.css" in html
    assert 'id="trace-second-call-fails-line-3"' in graphs
    assert "It raised RuntimeError; the console shows the error and goes on" in graphs
    # The transcript is shown once, inside its player.
    player = graphs[graphs.index('id="trace-second-call-fails"') :]
    assert player.index('<div class="highlight"') < player.index('<ol class="ag-tracer__steps"')


def test_search_index_keeps_the_prose_not_the_players_steps(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text())
    text = next(
        d["text"] for d in index["docs"] if d["location"].endswith("#the-script-line-by-line")
    )
    assert "Line 8 of 12" not in text  # issue 18: a preview is prose, not a step list
    assert "<table>" not in text and "saved self (x1) = 1.1000" not in text  # no drawing's labels


def test_footer_names_the_torch_release_and_the_commit(built_site: Path) -> None:
    html = page_html(built_site, DOCS / "index.md")
    assert f"produced by PyTorch {torch.__version__}." in html
    commit, day = git("log", "-1", "--format=%H %cd", "--date=format-local:%Y-%m-%d").split()
    dirty = "-dirty" if git("status", "--porcelain") else ""
    assert f"Built from commit {commit[:12]}{dirty}, dated {day}." in html


def test_addresses_follow_site_url(built_site: Path) -> None:
    """Canonical links and the sitemap name site_url (SITE_URL, else the published address);
    the sitemap's dates are the commit's."""
    site_url = load_config(str(ROOT / "mkdocs.yml")).site_url
    html = page_html(built_site, DOCS / "computing-gradients.md")
    assert f'<link rel="canonical" href="{site_url}computing-gradients/">' in html
    sitemap = (built_site / "sitemap.xml").read_text()
    locations = re.findall(r"<loc>(.*?)</loc>", sitemap)
    assert len(locations) == len(PAGES)
    assert all(location.startswith(site_url) for location in locations), locations
    day = git("log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%d").strip()
    assert set(re.findall(r"<lastmod>(.*?)</lastmod>", sitemap)) == {day}
    gzip_mtime = struct.unpack("<I", (built_site / "sitemap.xml.gz").read_bytes()[4:8])[0]
    assert gzip_mtime == datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def test_site_url_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITE_URL", "https://example.org/elsewhere/")
    assert load_config(str(ROOT / "mkdocs.yml")).site_url == "https://example.org/elsewhere/"


def test_html_has_no_raw_fence_left(built_site: Path) -> None:
    for page in PAGES:
        html = page_html(built_site, page)
        assert not re.search(r'exec="on"|autograd-failure', html), page.name


def test_two_builds_produce_identical_html(built_site: Path, copies: Copies) -> None:
    # The harness's passing copy holds the same pages, untouched, next to pages of its own;
    # the real command built it in another process, from another folder.
    if not copies.passing_build.result().ok:
        pytest.skip("the passing copy did not build: tests/site/test_harness.py says why")
    again = copies.passing / "site"
    pages = sorted(p.relative_to(built_site) for p in built_site.rglob("*.html"))
    assert len(pages) == len(PAGES) + 1  # and 404.html
    for page in pages:
        assert (built_site / page).read_text() == (again / page).read_text(), page


def test_a_build_on_another_day_is_identical(
    built_site: Path, faked_clock_site: FakedClockBuild
) -> None:
    """Every file, sitemap.xml(.gz) and search index included: dates come from the commit."""
    faked = subprocess.run([FAKETIME, FAKED_CLOCK, "date", "-u", "+%F"], capture_output=True)
    assert faked.stdout.decode().strip() == FAKED_CLOCK.split()[0], "faketime fakes no clock"
    result = faked_clock_site.build.result()  # the session's own build passed (built_site)
    assert result.ok, result.log
    again = faked_clock_site.site
    files = sorted(p.relative_to(built_site) for p in built_site.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    differ = [f for f in files if (built_site / f).read_bytes() != (again / f).read_bytes()]
    assert not differ, f"built on {FAKED_CLOCK}, these files differ: {differ}"
    assert {"sitemap.xml", "sitemap.xml.gz", "search/search_index.json"} <= {
        f.as_posix() for f in files
    }


def test_links_to_a_players_step_or_node_reach_it(built_site: Path) -> None:
    """The prose links to steps and walk nodes in raw HTML, which MkDocs does not check."""
    for page in PAGES:
        html = page_html(built_site, page)
        ids = set(re.findall(r'\bid="([^"]+)"', html))
        for target in re.findall(r'href="#(trace-[^"]+)"', html):
            assert target in ids, f"{page.name} links to #{target}, which is not on the page"


def test_search_index_reads_each_walk_back_as_its_nodes(built_site: Path) -> None:
    index = json.loads((built_site / "search" / "search_index.json").read_text())
    text = " ".join(d["text"] for d in index["docs"] if "computing-gradients/" in d["location"])
    assert (
        "walks back through 6 nodes: BinaryCrossEntropyBackward0, SigmoidBackward0, AddBackward0,"
        " AccumulateGrad of <code>b</code>, MulBackward0, AccumulateGrad of <code>w1</code>."
    ) in text
