"""The benchmark script imports, and its arithmetic is right: fake numbers only, no builds."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.paths import ROOT


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


SAMPLES = {
    "build_on": [3.0, 2.0, 9.0],  # median 3.0
    "build_off": [1.5, 1.0, 1.2],  # median 1.2
    "python_startup": [0.02, 0.02, 0.02],
    "import_torch_gross": [1.7, 1.6, 1.8],  # median 1.7, net 1.68
    "full_suite": [5.0, 5.5, 5.9],  # median 5.5
}


def test_medians_derive_execution_cost_and_net_import(bench: ModuleType) -> None:
    meds = bench.medians(SAMPLES)
    assert meds["execution_cost"] == pytest.approx(3.0 - 1.2)
    assert meds["import_torch"] == pytest.approx(1.7 - 0.02)
    rats = bench.ratios(meds)
    assert rats["execution_cost / import_torch"] == pytest.approx(1.8 / 1.68)
    assert rats["full_suite / build_on"] == pytest.approx(5.5 / 3.0)
    assert "serve_rebuild / build_on" not in rats  # not measured, not made up


def page(bench: ModuleType, name: str, total: int) -> object:
    resource = bench.Resource(name, "document", total, total // 3)
    return bench.PageWeight(name, total, total // 3, {"document": total}, [resource], [])


def test_targets_pass_fail_and_skip(bench: ModuleType) -> None:
    meds = bench.medians(SAMPLES)
    pages = [page(bench, "a/", 599_999), page(bench, "b/", 600_000)]
    verdicts = [t.verdict for t in bench.targets(meds, pages)]
    assert verdicts == ["PASS", "PASS", "FAIL"]  # 1.8 <= 1.1 * 1.68; 5.5 < 6; 600 KB is over
    assert [t.verdict for t in bench.targets({}, None)] == ["SKIP", "SKIP", "SKIP"]
    text = "\n".join(bench.summary_lines(SAMPLES, meds, bench.ratios(meds), pages, []))
    assert "| execution_cost / import_torch | 1.07 |" in text
    assert "| b/ | 600.0 | 200.0 | NO |" in text


def test_arguments_and_content_pages(bench: ModuleType, tmp_path: Path) -> None:
    args = bench.parse_args([])
    assert (args.repeat, args.suite_repeat, args.output) == (5, 3, bench.DEFAULT_OUTPUT)
    for html in ("index.html", "a/index.html", "404.html", "assets/x/index.html"):
        (tmp_path / html).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / html).write_text("<html></html>")
    assert bench.content_pages(tmp_path) == ["a/", ""]
