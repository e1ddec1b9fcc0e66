"""MkDocs hook: the build-time HTML touches of autograd_traced.page_html.reader_markup."""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from autograd_traced.page_html.reader_markup import (
    break_table_code_at_dots,
    mark_tracebacks,
    name_search_dialog,
)


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    return break_table_code_at_dots(mark_tracebacks(html))


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return name_search_dialog(output, "Search")
