"""The site's own scripts and style sheets, compacted as pages download them."""

import subprocess

import pytest

from autograd_traced.build.assets import compact
from tests.support.paths import ROOT


def test_comments_and_indentation_go_the_code_stays() -> None:
    css = "/* why */\n.a {\n  color: red; /* kept: not a whole line */\n}\n\n"
    assert compact(css, script=False) == ".a {\ncolor: red; /* kept: not a whole line */\n}\n"
    js = "/*\n * why\n */\n(() => {\n  // why\n  const url = 'http://x';\n})();\n"
    assert compact(js, script=True) == "(() => {\nconst url = 'http://x';\n})();\n"


def test_a_template_literal_across_lines_is_refused() -> None:
    with pytest.raises(ValueError, match="template literal"):
        compact("const a = `one\n  two`;\n", script=True)


def test_the_compacted_player_is_still_valid_javascript(tmp_path) -> None:  # type: ignore[no-untyped-def]
    for name in ("tracer.js", "diagram-zoom.js"):
        out = tmp_path / name
        out.write_text(compact((ROOT / "docs/javascripts" / name).read_text(), script=True))
        subprocess.run(["node", "--check", str(out)], check=True)
