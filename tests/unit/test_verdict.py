"""The build reads a page's reports as data of one exact shape, and nothing else."""

import pytest

from autograd_traced.running.child import FenceReport
from autograd_traced.running.snippets import Executed

GOOD = {
    "executed": [{"output": "1\n", "exception": None, "traceback": "", "echoed": False}],
    "html": "",
}


def test_a_report_of_the_right_shape_is_read() -> None:
    report = FenceReport.from_json({**GOOD, "error": "", "skipped": ""})
    assert report.executed == [Executed("1\n")]


@pytest.mark.parametrize(
    "sent",
    [
        [],
        {**GOOD, "error": ""},  # a key missing
        {**GOOD, "error": "", "skipped": "", "extra": ""},
        {**GOOD, "error": 1, "skipped": ""},
        {**GOOD, "executed": {}, "error": "", "skipped": ""},
        {
            **GOOD,
            "executed": [{"output": "1", "exception": 2, "traceback": "", "echoed": False}],
            "error": "",
            "skipped": "",
        },
        {**GOOD, "executed": [{"output": "1"}], "error": "", "skipped": ""},
    ],
    ids=[
        "not-a-dict",
        "missing",
        "extra",
        "error-not-text",
        "executed-not-a-list",
        "exception-not-text",
        "example-missing-keys",
    ],
)
def test_anything_else_is_refused(sent: object) -> None:
    with pytest.raises(ValueError, match="not a"):
        FenceReport.from_json(sent)
