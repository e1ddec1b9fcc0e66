"""Under `--dirty` (serve or build), write again only the pages whose inputs changed.

MkDocs' own dirty mode skips a page whose Markdown file is older than its HTML: it misses a
saved snippet, and the pages whose navigation changed, and Material's search index then keeps
the entries of one page only. Here a page is keyed by content instead: its Markdown, its page
run's key (snippets, diagrams, settings, torch release, this package's code) and the site's
key (mkdocs.yml, the list of files, the theme overrides, the commit, KaTeX, and
the Markdown of any page whose navigation title comes from its heading). MkDocs is told a page is
modified exactly when its key differs from the one of the HTML it wrote last. What a skipped
page gave the build (its search entries, its anchors and its links to other pages' anchors)
is kept from the build that wrote it, so the search index and the anchor checks are a full
build's, and so is every page.

State lives on a `DirtySite`, which the plugin makes at startup and keeps across rebuilds.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from autograd_traced.running.plan import PagePlan

SEARCH_PLUGIN = "material/search"
# MkDocs warns, on every dirty build, that navigation and links may be stale; this module
# rebuilds every page they could be stale on, and under strict mode the warning would abort.
_DIRTY_WARNING = "A 'dirty' build is being performed"


@dataclass
class Written:
    """What one page's last written HTML was made from, and what it gave the build."""

    key: str
    anchors: set[str] = field(default_factory=set)
    links: dict[str, dict[str, str]] = field(default_factory=dict)  # page -> anchor -> link
    search_entries: list[dict[str, Any]] = field(default_factory=list)


class _DropDirtyWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(_DIRTY_WARNING)


class DirtySite:
    """One `mkdocs serve --dirty` or `build --dirty` (a site folder): what it wrote, build
    after build."""

    def __init__(self) -> None:
        self._written: dict[str, Written] = {}  # src_uri -> its last write
        self._keys: dict[str, str] = {}  # src_uri -> this build's key, in the build's order
        self._skipped: set[str] = set()  # this build's pages whose HTML is the last build's
        self._pending: dict[str, Written] = {}  # rendered, not written yet

    @staticmethod
    def drop_dirty_warning(active: bool) -> None:
        """Keep MkDocs' dirty-build warning out of the log (strict serve would abort on it)
        while a dirty serve runs, and only then."""
        build_log = logging.getLogger("mkdocs.commands.build")
        for old in [f for f in build_log.filters if isinstance(f, _DropDirtyWarning)]:
            build_log.removeFilter(old)
        if active:
            build_log.addFilter(_DropDirtyWarning())

    def mark_changed(self, files: Files, page_keys: dict[str, str]) -> list[str]:
        """Tell MkDocs which pages to write: those whose key differs from their HTML's.

        Returns the pages written again, in the build's order.
        """
        self._keys = dict(page_keys)
        self._skipped.clear()
        self._pending.clear()
        changed = []
        for file in files.documentation_pages():
            last = self._written.get(file.src_uri)
            fresh = last is not None and last.key == page_keys[file.src_uri]
            fresh = fresh and Path(file.abs_dest_path).is_file()
            if fresh:
                self._skipped.add(file.src_uri)
            else:
                changed.append(file.src_uri)
            # MkDocs asks this of every page in a dirty build instead of comparing file times.
            file.is_modified = lambda modified=not fresh: modified  # type: ignore[method-assign]
        return changed

    def restore_skipped(self, files: Files) -> None:
        """Give each skipped page the anchors and links MkDocs checks after writing the others."""
        for src_uri in self._skipped:
            file = files.get_file_from_path(src_uri)
            if file is None or file.page is None:
                continue
            written = self._written[src_uri]
            file.page.present_anchor_ids = set(written.anchors)
            # The list of files is in the site's key: every linked page exists, or none is skipped.
            file.page.links_to_anchors = {
                target: dict(links)
                for uri, links in written.links.items()
                if (target := files.get_file_from_path(uri)) is not None
            }

    def rendered(self, page: Page, reusable: bool) -> None:
        """Keep what the page just rendered was made from; a page that failed, or whose run was
        stopped (a time limit, a crash), is written again next time."""
        if not reusable:
            self._pending.pop(page.file.src_uri, None)
            return
        self._pending[page.file.src_uri] = Written(
            key=self._keys[page.file.src_uri],
            anchors=set(page.present_anchor_ids or ()),
            links={
                target.src_uri: dict(links)
                for target, links in (page.links_to_anchors or {}).items()
            },
        )

    def forget(self, page: Page) -> None:
        """The page's HTML is not what its key makes (its math failed): write it again next time."""
        self._written.pop(page.file.src_uri, None)
        self._pending.pop(page.file.src_uri, None)

    def written(self, page: Page, config: MkDocsConfig) -> None:
        """The page is being written: it now stands for its key, with its search entries."""
        self._written.pop(page.file.src_uri, None)
        if (done := self._pending.pop(page.file.src_uri, None)) is None:
            return
        search = config.plugins.get(SEARCH_PLUGIN)
        entries = search.search_index.entries if search is not None else []  # type: ignore[attr-defined]
        # Added by the search plugin as this page's template was rendered; this build's only.
        done.search_entries = [entry for entry in entries if _page_url(entry) == page.url]
        self._written[page.file.src_uri] = done

    def search_index(self, config: MkDocsConfig) -> str | None:
        """The index a full build writes: every page's entries, in the build's order (None
        without the search plugin).

        Material merges a dirty build's entries into the last index assuming one page was
        written; this replaces what it wrote.
        """
        search = config.plugins.get(SEARCH_PLUGIN)
        if search is None:
            return None
        index = type(search.search_index)(**search.search_index.config)  # type: ignore[attr-defined]
        index.entries = [  # _keys is in the build's order of pages
            entry
            for src_uri in self._keys
            if src_uri in self._written
            for entry in self._written[src_uri].search_entries
        ]
        return index.generate_search_index(None)


def site_key(config: MkDocsConfig, files: Files, commit: str, markdowns: dict[str, str]) -> str:
    """What every page depends on: a change here writes every page again.

    `markdowns` are the pages' texts by src_uri: a page the nav names without a title gives
    every page's navigation the title of its Markdown.
    """
    root = Path(config.config_file_path).parent
    digest = hashlib.sha256(commit.encode())
    digest.update(Path(config.config_file_path).read_bytes())
    digest.update("\n".join(sorted(file.src_uri for file in files)).encode())
    for src_uri in sorted(_untitled(config.nav, markdowns)):
        digest.update(f"\0{src_uri}\0{markdowns[src_uri]}".encode())
    theme = sorted(Path(config.theme.custom_dir).rglob("*")) if config.theme.custom_dir else []
    for source in (
        *theme,
        root / "docs/assets/katex/katex.min.js",  # the math is rendered with it at build time
    ):
        if source.is_file():
            digest.update(source.read_bytes())
    return digest.hexdigest()


def _untitled(nav: Any, markdowns: dict[str, str]) -> set[str]:
    """The pages whose title in the navigation comes from their own Markdown."""
    if nav is None:  # MkDocs makes the navigation of every page, titled by each
        return set(markdowns)
    if isinstance(nav, str):
        return {nav} & set(markdowns)
    if isinstance(nav, list):
        return set().union(*(_untitled(item, markdowns) for item in nav))
    if isinstance(nav, dict):  # {title: page} is titled; {title: [section...]} goes on
        return set().union(
            *(_untitled(item, markdowns) for item in nav.values() if not isinstance(item, str))
        )
    return set()


def page_key(site: str, markdown: str, plan: PagePlan) -> str:
    return hashlib.sha256(f"{site}\0{plan.key}\0{markdown}".encode()).hexdigest()


def _page_url(entry: dict[str, Any]) -> str:
    return str(entry["location"]).split("#", 1)[0]
