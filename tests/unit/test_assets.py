"""The site's own CSS and JavaScript lose their comments in the built copy, and nothing else."""

from __future__ import annotations

from pathlib import Path

from autograd_traced.build.assets import strip_own_assets

CSS = """/* Why this rule.
   Over two lines. */
.a {
  width: 1rem; /* why */
  content: "";
}
"""
JS = """// Why this script.
(() => {
  /* a block */
  const url = "http://example.org"; // kept: it ends a line of code
  return url;
})();
"""


def test_comments_are_stripped_twice_alike(tmp_path: Path) -> None:
    (tmp_path / "stylesheets").mkdir()
    (tmp_path / "javascripts").mkdir()
    (tmp_path / "assets").mkdir()
    (tmp_path / "stylesheets/a.css").write_text(CSS)
    (tmp_path / "javascripts/a.js").write_text(JS)
    (tmp_path / "assets/vendor.css").write_text(CSS)
    strip_own_assets(tmp_path)
    css, js = (
        (tmp_path / "stylesheets/a.css").read_text(),
        (tmp_path / "javascripts/a.js").read_text(),
    )
    assert css == '.a {\n  width: 1rem;\n  content: "";\n}\n'
    assert js == (
        "(() => {\n"
        '  const url = "http://example.org"; // kept: it ends a line of code\n'
        "  return url;\n"
        "})();\n"
    )
    assert (tmp_path / "assets/vendor.css").read_text() == CSS  # vendored files stay as sent
    strip_own_assets(tmp_path)
    assert (tmp_path / "stylesheets/a.css").read_text() == css
    assert (tmp_path / "javascripts/a.js").read_text() == js
