"""MkDocs hook: give each page a fresh namespace and check that every snippet fence ran.

A fence whose options fail validation is rendered by SuperFences as plain code, never run,
with no warning; comparing the fences in the Markdown with those rendered catches that.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from autograd_traced.fences import begin_page, current_page
from autograd_traced.snippets import FENCE_RE, FILE_OPTION_RE

log = logging.getLogger("mkdocs.hooks.executed_pages")
_expected: dict[str, list[str]] = {}


def _page_path(page: Page, config: MkDocsConfig) -> str:
    root = Path(config.config_file_path).parent
    return Path(page.file.abs_src_path).relative_to(root).as_posix()


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    begin_page(Path(config.config_file_path).parent, _page_path(page, config))
    _expected[page.file.src_uri] = [
        match.group("path")
        for fence in FENCE_RE.finditer(markdown)
        for match in [FILE_OPTION_RE.search(fence.group("options"))]
        if match
    ]
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    state = current_page()
    expected = _expected.pop(page.file.src_uri)
    if state.rendered != expected:
        log.warning(
            "%s: ran snippets %s, but the page's fences name %s; a fence that did not run "
            "has an option SuperFences rejected",
            state.page,
            state.rendered,
            expected,
        )
    return html
