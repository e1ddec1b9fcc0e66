"""The benchmark imports, and its arithmetic, parsing and site copies are right: fake numbers
and a copied (never built) site only, so this stays fast."""

from collections.abc import Callable
from pathlib import Path

import pytest

from autograd_traced.plugin import PLUGIN_NAME
from benchmarks import growth, report, stages, targets
from benchmarks.__main__ import DEFAULT_OUTPUT, parse_args
from benchmarks.harness import PYTHON, base_env, interleave
from benchmarks.lighthouse import page_urls
from benchmarks.memory import TreeMemory, descendants, tree_memory
from benchmarks.scaled_site import make_scaled_site, read_config, snippet_files
from tests.support.paths import ROOT

MIB = 2**20
SAMPLES = {
    "build_on": [3.0, 2.0, 9.0],  # median 3.0
    "build_off": [1.5, 1.0, 1.2],  # median 1.2
    "python_startup": [0.02, 0.02, 0.02],
    "import_torch_gross": [1.7, 1.6, 1.8],  # median 1.7, net 1.68
    "scale_build_on": [6.0, 5.0, 7.0],  # median 6.0
    "scale_build_plain": [1.0, 1.1, 0.9],  # median 1.0: scale_cost 5.0
    "serve_reload_site": [1.0, 1.2, 1.1],  # median 1.1
    "serve_reload_scaled": [2.2, 2.3, 2.1],  # median 2.2: exactly 2x
    "full_suite": [5.0, 5.5, 5.9],  # median 5.5
    "warm_build": [1.2, 1.1, 1.0],  # median 1.1
    "warm_build_plain": [1.0, 1.0, 1.0],  # median 1.0: 1.1x, the limit
    "warm_build_edit": [1.9, 1.8, 2.0],  # median 1.9: 0.9 over plain, > 0.5 x 1.68
}


def memory(*mib: float) -> list[TreeMemory]:
    return [TreeMemory(2, int(m * MIB * 1.5), int(m * MIB)) for m in mib]


def test_the_two_sides_of_a_ratio_alternate() -> None:
    order: list[str] = []

    def side(name: str, seconds: float) -> Callable[[int], float]:
        def run(round_: int) -> float:
            order.append(f"{name}{round_}")
            return seconds

        return run

    samples = interleave({"on": side("on", 2.0), "off": side("off", 1.0)}, 3)
    assert order == ["on0", "off0", "on1", "off1", "on2", "off2"]
    assert samples == {"on": [2.0, 2.0, 2.0], "off": [1.0, 1.0, 1.0]}


def test_medians_derive_costs_and_ratios() -> None:
    meds = targets.medians(SAMPLES)
    assert meds["import_torch"] == pytest.approx(1.7 - 0.02)
    assert meds["execution_cost"] == pytest.approx(3.0 - 1.2)
    assert meds["scale_cost"] == pytest.approx(6.0 - 1.0)
    rats = targets.ratios(meds)
    assert rats["execution_cost / import_torch"] == pytest.approx(1.8 / 1.68)
    assert rats["serve_reload_scaled / serve_reload_site"] == pytest.approx(2.0)
    assert "snippet_suite / build_on" not in rats  # not measured, not made up


def test_targets_pass_fail_and_skip() -> None:
    meds = targets.medians(SAMPLES)
    found = targets.targets(SAMPLES, memory(200, 220), pages=40)
    # 1.8 <= 1.1 x 1.68; 5.0 > 1.5 x 1.68; 2.2 <= 2 x 1.1; +20 MiB is the limit; 5.5 <= 6;
    # warm 1.1 <= 1.1 x 1.0; one edit 1.9 - 1.0 > 0.5 x 1.68
    verdicts = ["PASS", "FAIL", "PASS", "PASS", "PASS", "PASS", "FAIL", "SKIP"]  # no Lighthouse
    assert [t.verdict for t in found] == verdicts
    assert "41 pages" in found[2].name and "over 1 rebuilds at 41 pages" in found[3].name
    assert targets.targets(SAMPLES, memory(200, 220.1), pages=40)[3].verdict == "FAIL"
    assert {t.verdict for t in targets.targets({}, [], pages=40)} == {"SKIP"}
    scores = {"lighthouse_performance home": [95.0], "lighthouse_performance lab/": [89.0, 90.0]}
    lighthouse = targets.targets(scores, [], pages=40)[-1]
    assert lighthouse.verdict == "FAIL" and lighthouse.detail == "home 95, lab/ 89.5"
    scores["lighthouse_performance lab/"].append(91.0)
    assert targets.targets(scores, [], pages=40)[-1].verdict == "PASS"
    text = "\n".join(report.ratio_table(targets.ratios(meds)))
    assert "| execution_cost / import_torch | 1.07 |" in text


def test_the_scale_target_holds_in_every_round_not_in_the_median() -> None:
    """Each round's strict build minus the plain build run beside it: a median under the
    limit with one round over it fails."""
    rounds = {
        "python_startup": [0.0],
        "import_torch_gross": [2.0],  # limit 1.5 x 2.0 = 3.0 s
        "scale_build_on": [7.0, 8.0, 7.5, 9.5, 7.0],
        "scale_build_plain": [5.0, 5.5, 5.0, 6.0, 5.0],  # costs 2.0, 2.5, 2.5, 3.5, 2.0
    }
    scale = targets.targets(rounds, [], pages=40)[1]
    assert targets.medians(rounds)["scale_cost"] <= 3.0  # the median alone would pass
    assert scale.verdict == "FAIL" and "each round 1.00, 1.25, 1.25, 1.75, 1.00" in scale.detail
    rounds["scale_build_on"][3] = 8.9  # 2.9 s: every round under the limit
    assert targets.targets(rounds, [], pages=40)[1].verdict == "PASS"


def test_stages_are_parsed_and_the_rest_derived() -> None:
    log = (
        "DEBUG   -  autograd-traced stages: "
        '{"execution": 1.5, "math": 0.5, "diagrams": 0.25}\n'
        "INFO    -  Documentation built in 3.00 seconds\n"
    )
    assert stages.build_stages(log) == {
        "execution": 1.5,
        "math": 0.5,
        "diagrams": 0.25,
        stages.REST: 0.75,
    }
    slower = log.replace('"math": 0.5', '"math": 1.5').replace("3.00", "4.00")
    medians = stages.median_stages([log, slower, log])
    assert medians["math"] == 0.5 and medians[stages.REST] == pytest.approx(0.75)
    before_the_engine_logs_them = stages.median_stages(["INFO    -  Documentation built in 3.00"])
    assert set(before_the_engine_logs_them.values()) == {None}
    assert "| math | n/a |" in report.stage_table("x", before_the_engine_logs_them)


def fake_process(proc: Path, pid: int, ppid: int, rss_kib: int, pss_kib: int) -> None:
    (proc / str(pid)).mkdir(parents=True)
    (proc / str(pid) / "stat").write_text(f"{pid} (python3 -m x) S {ppid} {pid} 0\n")
    rollup = f"00400000-7fff rollup\nRss:  {rss_kib} kB\nPss:  {pss_kib} kB\n"
    (proc / str(pid) / "smaps_rollup").write_text(rollup)


def test_memory_sums_the_process_tree(tmp_path: Path) -> None:
    fake_process(tmp_path, 10, 1, 1000, 800)  # serve
    fake_process(tmp_path, 11, 10, 600, 100)  # a forked child
    fake_process(tmp_path, 12, 11, 400, 50)  # its child (say, node)
    fake_process(tmp_path, 20, 1, 9999, 9999)  # unrelated
    assert sorted(descendants(10, tmp_path)) == [10, 11, 12]
    assert tree_memory(10, tmp_path) == TreeMemory(3, 2000 * 1024, 950 * 1024)


def nav_pages(config: Path) -> list[str]:
    return [page for entry in read_config(config)["nav"] for page in entry.values()]


ARTICLES = [page for page in nav_pages(ROOT / "mkdocs.yml") if page != "index.md"]


def test_scaled_site_gives_each_copy_its_own_snippets(tmp_path: Path) -> None:
    site = make_scaled_site(ROOT, tmp_path / "site", 2 * len(ARTICLES))
    copies = nav_pages(site.root / "mkdocs.yml")[len(ARTICLES) + 1 :]
    assert copies == [f"{Path(page).stem}-2.md" for page in ARTICLES]
    users: dict[str, list[str]] = {}
    for page in copies:
        for snippet in snippet_files((site.root / "docs" / page).read_text()):
            assert (site.root / snippet).is_file()
            users.setdefault(snippet, []).append(page)
    assert all(len(pages) == 1 for pages in users.values())
    edited = site.edited_snippet.relative_to(site.root).as_posix()
    assert edited.startswith(f"snippets/{copies[-1].removesuffix('.md')}/")
    assert users[edited] == [copies[-1]]


def test_plain_material_copy_has_no_plugin_and_no_executable_fence(tmp_path: Path) -> None:
    site = make_scaled_site(ROOT, tmp_path / "site", len(ARTICLES))
    plain = site.plain_config.read_text()
    for gone in ("hooks", "markdown-exec", "custom_fences", "autograd_traced"):
        assert gone not in plain
    plugins = read_config(site.plain_config)["plugins"]  # search keeps its settings
    assert [name if isinstance(name, str) else next(iter(name)) for name in plugins] == ["search"]
    assert PLUGIN_NAME in str(read_config(site.root / "mkdocs.yml")["plugins"])
    page = (site.root / "docs-plain" / "computing-gradients.md").read_text()
    assert "exec=" not in page
    assert (ROOT / "snippets/computing_gradients/hand_check.pycon").read_text() in page


def test_arguments() -> None:
    args = parse_args([])
    assert (args.repeat, args.pages, args.serve_rounds, args.output) == (5, 40, 10, DEFAULT_OUTPUT)
    assert args.growth_pages == [5, 40, 200]
    with pytest.raises(SystemExit):
        parse_args(["--pages", "1"])
    with pytest.raises(SystemExit):
        parse_args(["--growth-pages", "40", "1"])


def test_growth_reads_each_build_peak_and_cost_per_page(tmp_path: Path) -> None:
    # 64 MiB held by the command's own child: the peak is that process's, not the wrapper's.
    hold = "b = bytearray(64 * 2**20); import time; time.sleep(0.2)"
    found = growth.measured_build(
        [PYTHON, "-c", f"import subprocess, sys; subprocess.run([sys.executable, '-c', {hold!r}])"],
        env=base_env(),
        cwd=tmp_path,
    )
    assert found.wall >= 0.2 and found.cpu > 0
    assert 64 < found.peak_mib < 200
    build = growth.Build
    size = growth.Size(
        10,
        {
            "cold": build(12.0, 20.0, 300),
            "warm": build(3.0, 3.0, 60),
            "edit": build(5.0, 7.0, 300),
            "plain": build(2.0, 2.0, 50),
        },
    )
    assert size.per_page_over_plain("cold") == pytest.approx(1.0)
    assert growth.growth_table([size])[-1] == (
        "| 10 | 12.00 s (20.00 s) | 3.00 s (3.00 s) | 5.00 s (7.00 s) | 2.00 s (2.00 s) "
        "| 1.000 s | 0.100 s | 300 / 60 / 50 |"
    )


def test_lighthouse_reads_every_page_of_the_nav() -> None:
    urls = page_urls()
    assert urls[0] == "" and "find-the-line/" in urls
    assert len(urls) == len(set(urls)) == len(list((ROOT / "docs").glob("*.md")))
