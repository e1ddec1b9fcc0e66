"""MkDocs hook: give each page a fresh namespace, check that every executable fence ran, and
render its math with KaTeX at build time.

A fence whose options fail validation is rendered by SuperFences as plain code, never run,
with no warning; comparing the fences in the Markdown with those that ran catches that.
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from autograd_traced import takeaways
from autograd_traced.fences import begin_page, current_page, executing
from autograd_traced.math import MathError, render_math
from autograd_traced.search_text import MathTextError, exclude_tab_labels, readable_index
from autograd_traced.snippets import EXEC_FENCE_RE
from autograd_traced.torch_import import import_torch

log = logging.getLogger("mkdocs.hooks.executed_pages")
_expected: dict[str, list[str]] = {}
_downloads: list[takeaways.Download] = []


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if executing():
        torch = import_torch()  # once per process: `mkdocs serve` rebuilds reuse it
        # Taken from the build, never typed: the outputs on every page come from this release.
        config.copyright = f"Every output on this site was produced by PyTorch {torch.__version__}."
    else:
        config.copyright = "Execution was off for this build: outputs are the stored transcripts."
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    return takeaways.publish_snippets(files, config)


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    root = Path(config.config_file_path).parent
    begin_page(root, Path(page.file.abs_src_path).relative_to(root).as_posix())
    _expected[page.file.src_uri] = [m.group(0).strip() for m in EXEC_FENCE_RE.finditer(markdown)]
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    state = current_page()
    expected = _expected.pop(page.file.src_uri)
    if len(state.ran) != len(expected):
        log.warning(
            "%s: %d executable fences ran, but the page has %d: %s. A fence that did not run "
            "has an option SuperFences rejected.",
            state.page,
            len(state.ran),
            len(expected),
            expected,
        )
    if not state.failed:  # a failed page has a console block without a run: the build fails
        try:
            html, downloads = takeaways.add_to_page(html, page, files, state.consoles)
            _downloads.extend(downloads)
        except takeaways.TakeawayError as error:
            log.warning("%s", error)
    return exclude_tab_labels(html)


def on_post_build(config: MkDocsConfig) -> None:
    takeaways.write(config.site_dir, _downloads)
    _downloads.clear()
    # The search plugin, listed before this hook, has written the index by now.
    index = Path(config.site_dir) / "search" / "search_index.json"
    try:
        index.write_text(readable_index(index.read_text(encoding="utf-8")), encoding="utf-8")
    except MathTextError as error:
        log.warning("search index: %s", error)


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    # After the search plugin took the page's text: the index keeps each formula once, as TeX.
    katex_js = Path(config.config_file_path).parent / "docs/assets/katex/katex.min.js"
    try:
        return render_math(output, katex_js)
    except MathError as error:
        log.warning("%s: %s", page.file.src_uri, error)
        return output
