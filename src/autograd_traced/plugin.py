"""The `autograd-traced` MkDocs plugin: run every page's executable fences before rendering
(in parallel, each page in a process of its own, reusing results whose inputs did not
change, in this process and, with the results cache, across builds), fail the build on any
failure, and finish the page's HTML for its readers.

A failed fence fails `mkdocs build` whatever its flags (`-q`, `-v`, with or without
`--strict`): it is an error of its own, raised before any page is written. Under
`mkdocs serve` the page shows the error instead, and the server keeps serving.

MkDocs keeps a plugin that has `on_startup` across `mkdocs serve` rebuilds (and across the
builds of one process), so what outlives a build lives on the instance; what one build
gathers is made afresh in `on_config`.
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page
from mkdocs.utils import meta

from autograd_traced.build import assets, incremental, provenance
from autograd_traced.build.failures import report_to_writer
from autograd_traced.build.order import RenderOrder
from autograd_traced.build.stages import Stage, Stages
from autograd_traced.fences.grammar import headings, in_collapsed_block, section_of
from autograd_traced.fences.superfences import FenceShow, PageState, error_block
from autograd_traced.page_html import search_aside, takeaways
from autograd_traced.page_html.katex import MATH_RE, MathError, render_math, warm_up
from autograd_traced.page_html.plain_tokens import unwrap_plain_tokens
from autograd_traced.page_html.program_files import Console, cells_from_runs
from autograd_traced.page_html.reader_markup import (
    break_table_code_at_dots,
    mark_tracebacks,
    name_search_dialog,
)
from autograd_traced.page_html.search_index import (
    MathTextError,
    exclude_tab_labels,
    readable_index,
)
from autograd_traced.page_html.whitespace import strip_indentation
from autograd_traced.running import pages
from autograd_traced.running.plan import (
    DEFAULT_MEMORY,
    DEFAULT_TIMEOUT,
    PagePlan,
    PageRun,
    Settings,
    plan_page,
)
from autograd_traced.running.results_cache import ResultsCache

if TYPE_CHECKING:  # serve's server: imported by serve itself, not by every build
    from mkdocs.livereload import LiveReloadServer

log = logging.getLogger("mkdocs.plugins.autograd_traced")
SUPERFENCES = "pymdownx.superfences"


class AutogradTracedConfig(base.Config):
    # Seconds one example may run; a fence's timeout="..." overrides it.
    timeout = c.Type((int, float), default=DEFAULT_TIMEOUT)
    # MiB a page's process (and each process it starts) may map beyond what it started with:
    # past it an allocation raises MemoryError, named at its snippet line.
    memory = c.Type(int, default=DEFAULT_MEMORY)
    # The pages that offer their program as a script and a notebook (one program each).
    downloads = c.ListOfItems(c.Type(str), default=[])
    # False: pages show their stored transcripts and torch is never imported (the
    # benchmark's baseline, `AUTOGRAD_TRACED_EXECUTE=false` in mkdocs.yml).
    execute = c.Type(bool, default=True)
    # Page runs kept across builds (running/results_cache.py): a build runs only the pages
    # whose inputs changed. `cache_dir` is relative to mkdocs.yml and must be inside its
    # folder, which a page's process sees read-only.
    cache = c.Type(bool, default=True)
    cache_dir = c.Type(str, default=".cache/autograd-traced")


class AutogradTracedPlugin(BasePlugin[AutogradTracedConfig]):
    def __init__(self) -> None:
        self.serving = False  # `mkdocs serve`: show failures on the page, keep serving
        self.dirty: incremental.DirtySite | None = None  # `--dirty` only
        self.runner = pages.shared_runner()  # page runs, kept across builds by their key
        self.cache: ResultsCache | None = None  # ... and on disk, across processes
        self.fences = FenceShow()
        self.previous_sigint: Any = None  # `mkdocs build`: Ctrl-C is ours until on_shutdown
        # One build's: made afresh in on_config.
        self.stages = Stages()
        self.source = provenance.Provenance(None, None)
        self.plans: dict[str, tuple[str, PagePlan]] = {}  # src_uri -> (Markdown, its plan)
        self.set_aside: dict[str, list[str]] = {}  # src_uri -> what search need not read
        self.downloads: list[takeaways.Download] = []  # written once the site is
        self.order = RenderOrder()  # the pages that run are rendered last
        # Rendered, their fences still placeholders: finished as their runs end (_finish).
        self.unfilled: list[tuple[Page, Files, PageState]] = []

    def load_config(
        self, options: dict[str, Any], config_file_path: str | None = None
    ) -> tuple[base.ConfigErrors, base.ConfigWarnings]:
        """A misspelt option is an error, not a warning a non-strict build would pass over."""
        errors, warnings = super().load_config(options, config_file_path)
        return [*errors, *warnings], []

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"
        main = threading.current_thread() is threading.main_thread()
        if command == "build" and main and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self.previous_sigint = signal.signal(signal.SIGINT, self._ctrl_c)
        # `serve --dirty`, or `build --dirty` into a site folder written before: MkDocs would
        # skip a page whose Markdown is older than its HTML, though a snippet it runs changed.
        # Keyed by content instead; a new process has written nothing yet, so it writes all.
        self.dirty = incremental.DirtySite() if dirty else None
        incremental.DirtySite.drop_dirty_warning(dirty)

    def on_serve(self, server: LiveReloadServer, *, config: MkDocsConfig, builder: Any) -> Any:
        """A rebuild that fails outside the pages (strict mode's warnings after a page was
        renamed, a broken mkdocs.yml) makes MkDocs' server hold every request until a build
        succeeds: every URL hangs. The writer gets the error in the terminal instead, and the
        server goes on answering with what the last build wrote."""
        rebuild = server.builder

        def rebuild_and_keep_answering() -> None:
            try:
                rebuild()
            except Exception as error:  # Abort on strict warnings, a config error...
                report_to_writer(f"The rebuild failed: {error}", on_page=False)

        server.builder = rebuild_and_keep_answering
        return server

    def on_shutdown(self) -> None:
        if self.previous_sigint is not None:
            signal.signal(signal.SIGINT, self.previous_sigint)
            self.previous_sigint = None

    def _ctrl_c(self, *_: object) -> None:
        # Said now: MkDocs' command line prints only "Aborted!" for a KeyboardInterrupt.
        log.error("%s", self.runner.interrupt())
        raise KeyboardInterrupt

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.fences.begin_build()
        self.stages = Stages()
        self.plans.clear()
        self.set_aside.clear()
        self.downloads.clear()
        self.unfilled.clear()
        self.source = provenance.read(Path(config.config_file_path).parent)  # git, once a build
        self.source.pin_build_date()  # dates in the sitemap are the commit's: same bytes
        if SUPERFENCES not in config.markdown_extensions:
            config.markdown_extensions.append(SUPERFENCES)
        superfences = config.mdx_configs.setdefault(SUPERFENCES, {})
        superfences["custom_fences"] = [
            *superfences.get("custom_fences", []),
            *self.fences.custom_fences(),
        ]
        self.cache = self._results_cache(config)
        if self.config.execute and (self.cache is None or self.cache.empty()):
            # Forked now, from this thread, before any page runs; it imports torch meanwhile,
            # once per process: `mkdocs serve` rebuilds reuse it. With results in the cache,
            # it is forked in on_files, and only if a page must run.
            pages.start_processes()
        return config

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        # Every page starts running now, a process per core, while MkDocs reads the others.
        documents = files.documentation_pages()
        texts = {
            file.src_uri: Path(file.abs_src_path).read_text(encoding="utf-8-sig")
            for file in documents
        }
        for file in documents:
            markdown = meta.get_data(texts[file.src_uri])[0]
            self.plans[file.src_uri] = (markdown, self._plan(file.abs_src_path, markdown, config))
        files = takeaways.publish_snippets(
            files, config, self._snippets_used(), dirty=self.dirty is not None
        )
        to_run = list(self.plans)
        if self.dirty is not None:
            site = incremental.site_key(config, files, self.source.sentence(), texts)
            keys = {
                uri: incremental.page_key(site, texts[uri], plan)
                for uri, (_, plan) in self.plans.items()
            }
            to_run = self.dirty.mark_changed(files, keys)
            log.info("Writing %d of %d pages: those whose inputs changed", len(to_run), len(keys))
        started = self.runner.prefetch(
            (self.plans[uri][1] for uri in to_run), self.stages, self.cache
        )
        running = {plan.key for plan in started}
        self.order.runs_last(files, [uri for uri in to_run if self.plans[uri][1].key in running])
        if self.cache is not None:
            log.info(
                "Results cache: %d page(s) run; the others' results are reused (%s)",
                len(started),
                self.config.cache_dir,
            )
        if self.serving:
            self.runner.forget_except(plan.key for _, plan in self.plans.values())
        return files

    def on_page_markdown(
        self, markdown: str, page: Page, config: MkDocsConfig, files: Files
    ) -> str:
        planned = self.plans.get(page.file.src_uri)
        if planned is not None and planned[0] == markdown:
            plan = planned[1]
        else:  # another plugin changed the page since on_files: it starts running now
            plan = self._plan(page.file.abs_src_path, markdown, config)
            self.runner.prefetch([plan], self.stages, self.cache)
        self.unfilled.append((page, files, self.fences.begin_page(plan)))
        return markdown

    def on_page_content(self, html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        # The page's fences are placeholders until its run has ended: every page whose run
        # has, in the order they were rendered, is finished now; the others in on_env.
        page.content = html
        while self.unfilled and self.runner.ready(self.unfilled[0][2].plan):
            self._finish(*self.unfilled.pop(0))
        return page.content

    def _finish(self, page: Page, files: Files, state: PageState) -> None:
        """The page's HTML with its fences' results, finished for its readers."""
        with self.stages.timed(Stage.EXECUTION):  # waiting, in on_env, for a run not ended
            run = self.runner.run_page(state.plan, self.stages, self.cache)
        failures = self.fences.failures
        html = self.fences.fill(state, page.content or "", run)
        html = break_table_code_at_dots(mark_tracebacks(html))
        missed = [
            failures.add(
                f"{result.where}: this {result.language} fence was not run by the build: "
                'SuperFences did not take it as a fence (check its options are key="value", '
                "and that it is not inside an HTML block)"
            )
            for result in run.results[state.shown :]
            if not result.failed
        ]
        if not run.failures:  # a failed page's downloads would stop short: the build fails
            consoles, taken = page_consoles(run, page.markdown or "")
            offered = page.file.src_uri in self.config.downloads
            try:
                html, page_downloads = takeaways.add_to_page(
                    html, page, files, consoles, downloads=taken if offered else None
                )
                self.downloads.extend(page_downloads)
            except takeaways.TakeawayError as error:
                missed.append(failures.add(str(error)))
        html = exclude_tab_labels(html)
        html, self.set_aside[page.file.src_uri] = search_aside.set_aside(html)
        if self.dirty is not None:  # a failed page is written again on every rebuild, and reported
            reusable = run.reusable and not run.failures and not missed
            self.dirty.rendered(page, reusable=reusable)
        page.content = "".join(error_block(message) for message in missed) + html

    def on_env(self, env, config: MkDocsConfig, files: Files):  # type: ignore[no-untyped-def]
        while self.unfilled:  # the pages whose runs had not ended when they were rendered
            self._finish(*self.unfilled.pop(0))
        documents = files.documentation_pages()
        if any(file.page and MATH_RE.search(file.page.content or "") for file in documents):
            warm_up(self._katex_js(config))  # the pages' runs have ended: a core is free
        if self.config.execute:
            # Taken from the build, never typed: the outputs on every page come from this release.
            release = pages.torch_version(self.cache)
            config.copyright = f"Every output on this site was produced by PyTorch {release}."
        else:
            config.copyright = (
                "Execution was off for this build: outputs are the stored transcripts."
            )
        config.copyright += f" {self.source.sentence()}"
        self.order.restore(files)  # every page is rendered: written in the site's order
        if self.dirty is not None:
            self.dirty.restore_skipped(files)
        if self.cache is not None:  # every page has run: the runs that passed are written
            # A whole build's pages are the current ones; serve's rebuilds only add to them.
            current = None if self.serving else [plan.key for _, plan in self.plans.values()]
            self.cache.write(only=current)
        # Every page is rendered, none is written yet: stop here so no broken page is published.
        messages = self.fences.failures.messages
        if messages:
            if self.serving:
                for message in messages:
                    report_to_writer(message)
            else:
                raise PluginError(
                    f"{len(messages)} executable fence(s) failed; no page was written:\n\n"
                    + "\n\n".join(messages)
                )
        return env

    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        output = name_search_dialog(output, "Search")
        output = search_aside.put_back(output, self.set_aside.pop(page.file.src_uri, []))
        output = unwrap_plain_tokens(strip_indentation(output))
        # After the search plugin took the page's text: the index keeps each formula once, as TeX.
        try:
            with self.stages.timed(Stage.MATH):
                output = render_math(output, self._katex_js(config))
        except MathError as error:
            message = self.fences.failures.add(f"{page.file.src_uri}: {error}")
            if self.serving:
                report_to_writer(message)
            if self.dirty is not None:
                self.dirty.forget(page)
            return output
        if self.dirty is not None:
            self.dirty.written(page, config)
        return output

    @staticmethod
    def _katex_js(config: MkDocsConfig) -> Path:
        return Path(config.config_file_path).parent / "docs/assets/katex/katex.min.js"

    @event_priority(-50)  # after the search plugin, which writes the index this rewrites
    def on_post_build(self, config: MkDocsConfig) -> None:
        log.debug(self.stages.record())
        takeaways.write(config.site_dir, self.downloads)
        self.downloads.clear()
        assets.write_compact(config.site_dir)
        index = Path(config.site_dir) / "search" / "search_index.json"
        try:
            # Under serve --dirty the search plugin merged the index wrongly: made again whole.
            whole = self.dirty.search_index(config) if self.dirty is not None else None
            text = whole if whole is not None else index.read_text(encoding="utf-8")
            index.write_text(readable_index(text), encoding="utf-8")
        except MathTextError as error:
            message = self.fences.failures.add(f"search index: {error}")
            if self.serving:
                report_to_writer(message, on_page=False)
        # Formulas are rendered as pages are written: reported once all are, anchors checked.
        if self.fences.failures.messages and not self.serving:
            raise PluginError("\n\n".join(self.fences.failures.messages))

    def settings(self) -> Settings:
        return Settings(
            timeout=float(self.config.timeout),
            memory=self.config.memory,
            execute=self.config.execute,
        )

    def _results_cache(self, config: MkDocsConfig) -> ResultsCache | None:
        if not (self.config.execute and self.config.cache):
            return None
        root = Path(config.config_file_path).parent.resolve()
        folder = (root / self.config.cache_dir).resolve()
        if folder == root or not folder.is_relative_to(root):
            raise PluginError(
                f"autograd-traced: cache_dir {self.config.cache_dir!r} must be a folder inside "
                f"{root}, which a page's process cannot write"
            )
        return ResultsCache(folder)

    def _snippets_used(self) -> set[str]:
        """The snippet files the pages' fences name, each checked by its plan first."""
        return {
            planned.fence.options["file"]
            for _, plan in self.plans.values()
            for planned in plan.fences
            if planned.fence.language == "pycon" and planned.source and not planned.problem
        }

    def _plan(self, abs_src_path: str | None, markdown: str, config: MkDocsConfig) -> PagePlan:
        root = Path(config.config_file_path).parent
        page = Path(abs_src_path or "").relative_to(root).as_posix()
        return plan_page(root, page, markdown, self.settings())


PLUGIN_NAME = "autograd-traced"  # its entry point, as mkdocs.yml lists it


def configured(config_file: Path) -> AutogradTracedPlugin:
    """The plugin as a site's mkdocs.yml configures it (the tests run pages with its settings)."""
    from mkdocs.config import load_config

    plugin = load_config(str(config_file)).plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, AutogradTracedPlugin):
        raise PluginError(f"{config_file} does not list the {PLUGIN_NAME} plugin")
    return plugin


def page_consoles(run: PageRun, markdown: str) -> tuple[list[Console], list[Console]]:
    """Every console block of a page, each under its heading; and those its downloads take:
    all but the ones in a collapsed `???` block (the lab's answers)."""
    fences = {planned.where: planned.fence for planned in run.plan.fences}
    consoles, taken = [], []
    titles = headings(markdown)
    for result in run.results:
        if result.language != "pycon":
            continue
        fence = fences[result.where]
        console = cells_from_runs(result.options["file"], result.runs, section_of(titles, fence))
        consoles.append(console)
        if not in_collapsed_block(markdown, fence):
            taken.append(console)
    return consoles, taken
