"""Writers using `mkdocs serve`: it starts with a broken snippet, shows the failure on the
page while it keeps serving, and recovers when the file is fixed, without a restart."""

from __future__ import annotations

from autograd_traced.tools.local_site import SERVE_ARGS
from tests.support.paths import ROOT
from tests.support.serve_copy import BROKEN_SNIPPET, ServeCopy

PAGE = "computing-gradients/"


def test_serve_shows_a_broken_snippet_on_the_page_and_recovers(serve_copy: ServeCopy) -> None:
    served = serve_copy.wait_until_serving()
    assert f"ERROR   -  {BROKEN_SNIPPET}:2 (used by docs/computing-gradients.md" in serve_copy.log()
    html = serve_copy.get(PAGE)
    assert 'class="admonition failure autograd-failure" role="alert"' in html
    assert f"{BROKEN_SNIPPET}:2 (used by docs/computing-gradients.md" in html
    assert "-w1.grad = -0.0898   b.grad = -0.0818" in html  # the diff, on the page
    assert serve_copy.get("") and "autograd-failure" not in serve_copy.get("")  # other pages

    serve_copy.fix()
    fixed = serve_copy.wait_for("Reloading browsers", after=served)
    # --dirty: the rebuild wrote the page whose snippet was saved, no other.
    assert "Writing 1 of " in serve_copy.log()[served:fixed]
    html = serve_copy.get(PAGE)
    assert "autograd-failure" not in html
    assert "w1.grad = -0.0898   b.grad = -0.0817" in html


def test_nox_serves_the_way_this_test_does() -> None:
    # noxfile.py imports local_site by path (it runs before the project is installed).
    noxfile = (ROOT / "noxfile.py").read_text(encoding="utf-8")
    assert "from autograd_traced.tools.local_site import" in noxfile
    assert 'session.run("mkdocs", *SERVE_ARGS, ' in noxfile
    assert SERVE_ARGS == ("serve", "--dirty")


def test_serve_keeps_answering_when_a_strict_rebuild_fails(serve_copy: ServeCopy) -> None:
    # Renaming a page breaks the links to it: strict mode aborts the rebuild, and MkDocs' own
    # server then held every request until a build succeeded.
    served = serve_copy.wait_until_serving()
    page, renamed = serve_copy.root / "docs" / "pitfalls.md", serve_copy.root / "docs" / "moved.md"
    page.rename(renamed)
    try:
        failed = serve_copy.wait_for("The rebuild failed: Aborted with", after=served)
        assert "(fix it and save: the site rebuilds)" in serve_copy.log()[failed:]
        assert "Computation Graphs" in serve_copy.get("")  # answered, not held
    finally:
        renamed.rename(page)
    serve_copy.wait_for("Reloading browsers", after=failed)
    assert "autograd-failure" not in serve_copy.get("pitfalls/")
