"""The site's own scripts and style sheets lose comments and indentation in the built copy,
and nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from autograd_traced.build.assets import compact, write_compact
from tests.support.paths import ROOT

CSS = """/* Why this rule.
   Over two lines. */
.a {
  width: 1rem; /* why */
  content: "";
}

"""
JS = """// Why this script.
/*
 * And a block.
 */
(() => {
  /* a block */ const kept = 1;
  const url = "http://example.org"; // kept: it ends a line of code
  return `${url}/${kept}`;
})();
"""


def test_comments_and_indentation_go_the_code_stays() -> None:
    assert compact(CSS, script=False) == '.a {\nwidth: 1rem;\ncontent: "";\n}\n'
    assert compact(JS, script=True) == (
        "(() => {\n"
        "/* a block */ const kept = 1;\n"  # not a line of its own: kept, and so is its code
        'const url = "http://example.org"; // kept: it ends a line of code\n'
        "return `${url}/${kept}`;\n"
        "})();\n"
    )


def test_a_template_literal_across_lines_is_refused() -> None:
    with pytest.raises(ValueError, match="template literal"):
        compact("const a = `one\n  two`;\n", script=True)


def test_the_site_is_compacted_twice_alike_vendored_files_untouched(tmp_path: Path) -> None:
    for folder, name, text in (
        ("stylesheets", "a.css", CSS),
        ("javascripts", "a.js", JS),
        ("assets/katex", "katex.min.css", CSS),
    ):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / name).write_text(text)
    write_compact(str(tmp_path))
    once = [(tmp_path / p).read_text() for p in ("stylesheets/a.css", "javascripts/a.js")]
    assert once == [compact(CSS, script=False), compact(JS, script=True)]
    assert (tmp_path / "assets/katex/katex.min.css").read_text() == CSS
    write_compact(str(tmp_path))
    assert [(tmp_path / p).read_text() for p in ("stylesheets/a.css", "javascripts/a.js")] == once


def test_the_compacted_scripts_are_still_valid_javascript(tmp_path: Path) -> None:
    scripts = sorted((ROOT / "docs/javascripts").glob("*.js"))
    assert scripts
    for source in scripts:
        out = tmp_path / source.name
        out.write_text(compact(source.read_text(), script=True))
        subprocess.run(["node", "--check", str(out)], check=True)
