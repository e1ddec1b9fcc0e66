"""The player's own JavaScript and CSS, as pages download them, stay as small as
CONTRIBUTING.md says they are."""

from __future__ import annotations

import re

from autograd_traced.build.assets import compact
from tests.support.paths import ROOT

# "at most\n14 KB of JavaScript (`docs/javascripts/tracer.js`) and 9 KB of CSS (`...`)"
SIZES_RE = re.compile(r"(\d+) KB of\s+(?:JavaScript|CSS)\s+\(`([^`]+)`\)")


def test_the_player_is_as_small_as_contributing_says() -> None:
    stated = SIZES_RE.findall((ROOT / "CONTRIBUTING.md").read_text())
    assert {path for _, path in stated} == {
        "docs/javascripts/tracer.js",
        "docs/stylesheets/tracer.css",
    }, stated
    for kilobytes, path in stated:
        served = compact((ROOT / path).read_text(encoding="utf-8"), script=path.endswith(".js"))
        size = len(served.encode())
        assert size <= int(kilobytes) * 1000, f"{path} is {size / 1000:.1f} KB, over {kilobytes} KB"
