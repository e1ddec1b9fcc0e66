"""A hostile drawing, as the build inlines it, runs nothing in a browser: no script, no
handler, no link, whatever is clicked (issue 22; the unit tests check the markup)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from autograd_traced.drawing.graph import graph_svg
from autograd_traced.drawing.svg import figure, inert
from tests.support.hostile_drawings import HOSTILE_SVG, hostile_graph

pytestmark = pytest.mark.browser

ACTIVE = "script, a, foreignObject, use, image, set, animate, iframe, [href], [xlink\\:href]"


def test_hostile_drawings_run_nothing_when_shown_and_clicked(browser: Browser) -> None:
    loss, names = hostile_graph()
    drawings = figure(graph_svg(loss, names, alt="hostile")) + figure(inert(HOSTILE_SVG))
    page = browser.new_page()
    try:
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.route("**/*", lambda route: route.abort())  # nothing may be fetched either
        page.set_content(f"<!doctype html><title>drawings</title><main>{drawings}</main>")
        for text in page.locator("svg text").all():
            text.click(force=True)
        page.wait_for_timeout(200)  # a handler or a link would have fired by now
        assert dialogs == []
        assert page.url == "about:blank"  # no link followed
        assert page.locator(ACTIVE).count() == 0
        handlers = page.evaluate(
            "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
            ".map(a => a.name).filter(n => n.startsWith('on'))"
        )
        assert handlers == []
        assert "javascript:alert(1)" in page.locator("figure").first.inner_text()  # as text
    finally:
        page.close()
