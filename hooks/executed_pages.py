"""MkDocs hook: run every page's executable fences before rendering (in parallel, each page in
a process of its own, reusing results whose inputs did not change), fail the build on any
failure, and render math with KaTeX at build time.

A failed fence fails `mkdocs build` whatever its flags (`-q`, `-v`, with or without
`--strict`): it is an error of its own, raised before any page is written. Under
`mkdocs serve` the page shows the error instead, and the server keeps serving.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils import meta

from autograd_traced.build import incremental, provenance
from autograd_traced.build import stages as build_mode
from autograd_traced.fences import superfences as fences
from autograd_traced.page_html import program_files as downloads
from autograd_traced.page_html import search_aside, takeaways
from autograd_traced.page_html import whitespace as html_whitespace
from autograd_traced.page_html.katex import MathError, render_math
from autograd_traced.page_html.search_index import MathTextError, exclude_tab_labels, readable_index
from autograd_traced.running import pages as page_run

log = logging.getLogger("mkdocs.hooks.executed_pages")
_downloads: list[takeaways.Download] = []  # each article's script and notebook, written last
_set_aside: dict[str, list[str]] = {}  # page -> what the search plugin need not read
_source: provenance.Provenance  # the commit this build is of, read in on_config


def on_startup(command: str, dirty: bool) -> None:
    build_mode.serving = command == "serve"  # this module is loaded again for each rebuild
    incremental.start(command, dirty)  # `mkdocs serve --dirty`: write changed pages only


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    fences.begin_build()
    build_mode.stages.clear()
    global _source
    _source = provenance.read(Path(config.config_file_path).parent)  # git, once a build
    _source.pin_build_date()  # dates in the sitemap are the commit's: same commit, same bytes
    if build_mode.executing():
        # Forked now, from this thread, before any page runs; it imports torch meanwhile,
        # once per process: `mkdocs serve` rebuilds reuse it.
        page_run.start_processes()
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files = takeaways.publish_snippets(files, config)
    # Every page starts running now, a process per core, while MkDocs reads the others.
    pages = files.documentation_pages()
    texts = {
        file.src_uri: Path(file.abs_src_path).read_text(encoding="utf-8-sig") for file in pages
    }
    plans = {
        file.src_uri: _plan(file.abs_src_path, meta.get_data(texts[file.src_uri])[0], config)
        for file in pages
    }
    to_run = list(plans)
    if incremental.active:
        site = incremental.site_key(config, files, _source.sentence(), texts)
        keys = {uri: incremental.page_key(site, texts[uri], plan) for uri, plan in plans.items()}
        to_run = incremental.mark_changed(files, keys)
        log.info("Writing %d of %d pages: those whose inputs changed", len(to_run), len(keys))
    page_run.prefetch(plans[uri] for uri in to_run)
    if build_mode.serving:
        page_run.forget_except(plan.key for plan in plans.values())
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    plan = _plan(page.file.abs_src_path, markdown, config)
    with build_mode.timed("execution"):
        fences.begin_page(page_run.run_page(plan))
    return markdown


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    state = fences.current_page()
    assert state is not None
    missed = [
        fences.failures.add(
            f"{result.where}: this {result.language} fence was not run by the build: "
            'SuperFences did not take it as a fence (check its options are key="value", '
            "and that it is not inside an HTML block)"
        )
        for result in state.unshown()
        if not result.failed
    ]
    if not state.run.failures:  # a failed page's downloads would stop short: the build fails
        consoles = [
            downloads.cells_from_runs(result.options["file"], result.runs)
            for result in state.run.results
            if result.language == "pycon"
        ]
        try:
            offered = page.file.src_uri in config.extra.get("downloads", [])
            html, page_downloads = takeaways.add_to_page(
                html, page, files, consoles, downloads=offered
            )
            _downloads.extend(page_downloads)
        except takeaways.TakeawayError as error:
            missed.append(fences.failures.add(str(error)))
    html = exclude_tab_labels(html)
    html, _set_aside[page.file.src_uri] = search_aside.set_aside(html)
    if incremental.active:  # a failed page is written again on every rebuild, and reported
        incremental.rendered(
            page, reusable=state.run.reusable and not state.run.failures and not missed
        )
    return "".join(fences.error_block(message) for message in missed) + html


def on_env(env, config: MkDocsConfig, files: Files):  # type: ignore[no-untyped-def]
    if build_mode.executing():
        # Taken from the build, never typed: the outputs on every page come from this release.
        release = page_run.torch_version()
        config.copyright = f"Every output on this site was produced by PyTorch {release}."
    else:
        config.copyright = "Execution was off for this build: outputs are the stored transcripts."
    config.copyright += f" {_source.sentence()}"
    if incremental.active:
        incremental.restore_skipped(files)
    # Every page is rendered, none is written yet: stop here so no broken page is published.
    if fences.failures.messages:
        if build_mode.serving:
            for message in fences.failures.messages:
                build_mode.report_to_writer(message)
        else:
            count = len(fences.failures.messages)
            raise PluginError(
                f"{count} executable fence(s) failed; no page was written:\n\n"
                + "\n\n".join(fences.failures.messages)
            )
    return env


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    output = search_aside.put_back(output, _set_aside.pop(page.file.src_uri, []))
    output = html_whitespace.strip_indentation(output)
    # After the search plugin took the page's text: the index keeps each formula once, as TeX.
    katex_js = Path(config.config_file_path).parent / "docs/assets/katex/katex.min.js"
    try:
        with build_mode.timed("math"):
            output = render_math(output, katex_js)
    except MathError as error:
        message = fences.failures.add(f"{page.file.src_uri}: {error}")
        if build_mode.serving:
            build_mode.report_to_writer(message)
        if incremental.active:
            incremental.forget(page)
        return output
    if incremental.active:
        incremental.written(page, config)
    return output


def on_post_build(config: MkDocsConfig) -> None:
    log.debug("autograd-traced stages: %s", json.dumps(build_mode.stages))
    takeaways.write(config.site_dir, _downloads)
    _downloads.clear()
    # The search plugin, listed before this hook, has written the index by now (under serve
    # --dirty, merged wrongly: the whole index is made again).
    index = Path(config.site_dir) / "search" / "search_index.json"
    try:
        whole = incremental.search_index(config) if incremental.active else None
        text = whole if whole is not None else index.read_text(encoding="utf-8")
        index.write_text(readable_index(text), encoding="utf-8")
    except MathTextError as error:
        message = fences.failures.add(f"search index: {error}")
        if build_mode.serving:
            build_mode.report_to_writer(message, on_page=False)
    # Formulas are rendered as pages are written: reported once all are, anchors checked.
    if fences.failures.messages and not build_mode.serving:
        raise PluginError("\n\n".join(fences.failures.messages))


def _plan(abs_src_path: str | None, markdown: str, config: MkDocsConfig) -> page_run.PagePlan:
    root = Path(config.config_file_path).parent
    page = Path(abs_src_path or "").relative_to(root).as_posix()
    settings = page_run.Settings.from_extra(config.extra, execute=build_mode.executing())
    return page_run.plan_page(root, page, markdown, settings)
