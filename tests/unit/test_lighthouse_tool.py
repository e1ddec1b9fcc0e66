"""tools.lighthouse reads Lighthouse's report: an unscored category is Lighthouse's own error,
named with the audits that errored, and the run is repeated once before it is reported."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from autograd_traced.tools import lighthouse

# A stand-in for npm's lighthouse: writes the report of the run whose number it is next, from
# reports.json beside it (the last report repeats), to the --output-path it is given.
FAKE = """\
import json, sys
from pathlib import Path
here = Path(__file__).parent
runs = here / "runs"
n = int(runs.read_text()) if runs.exists() else 0
runs.write_text(str(n + 1))
reports = json.loads((here / "reports.json").read_text())
out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--output-path="))
Path(out).write_text(json.dumps(reports[min(n, len(reports) - 1)]))
"""


def report(performance: float | None) -> dict:
    """A report whose categories score 1.0 but performance, which has one audit."""
    categories = {
        name: {"score": 1.0, "auditRefs": [{"id": "an-audit", "weight": 1}]}
        for name in lighthouse.CATEGORIES
    }
    categories["performance"] = {
        "score": performance,
        "auditRefs": [{"id": "largest-contentful-paint", "weight": 25}],
    }
    lcp = {"title": "Largest Contentful Paint", "score": performance}
    if performance is None:
        lcp |= {"scoreDisplayMode": "error", "errorMessage": "NO_LCP"}
    return {
        "categories": categories,
        "audits": {"an-audit": {"title": "An audit", "score": 1}, "largest-contentful-paint": lcp},
    }


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    script = tmp_path / "lighthouse"
    script.write_text(f"#!{sys.executable}\n{FAKE}")
    script.chmod(0o755)
    monkeypatch.setenv("LIGHTHOUSE", str(script))

    def with_reports(*reports: dict) -> Path:
        (tmp_path / "reports.json").write_text(json.dumps(list(reports)))
        return tmp_path / "runs"

    return with_reports


def test_a_scored_run_is_read(fake) -> None:
    runs = fake(report(0.87))
    result = lighthouse.audit("http://127.0.0.1:1/")
    assert result.scores["performance"] == 87 and result.scores["seo"] == 100
    assert result.failed["performance"] == ["largest-contentful-paint: Largest Contentful Paint"]
    assert runs.read_text() == "1"


def test_an_unscored_category_is_run_again(fake) -> None:
    runs = fake(report(None), report(0.93))
    assert lighthouse.audit("http://127.0.0.1:1/").scores["performance"] == 93
    assert runs.read_text() == "2"


def test_a_category_never_scored_is_lighthouses_error_named(fake) -> None:
    runs = fake(report(None))
    with pytest.raises(lighthouse.LighthouseError) as raised:
        lighthouse.audit("http://127.0.0.1:1/")
    assert "no score for performance: largest-contentful-paint: NO_LCP" in str(raised.value)
    assert str(raised.value).count("NO_LCP") == 2 and runs.read_text() == "2"
