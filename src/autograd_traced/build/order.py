"""The order MkDocs renders pages in: the pages whose results are at hand first, the pages
that must run last. The plugin fills pages in with their results in render order, as their
runs end: a page at hand is filled as soon as it is rendered, never held behind one still
running, and the runs (and the fork server's `import torch`) overlap the other pages' work.

MkDocs renders the pages (`on_page_markdown`, `on_page_content`) in the order of its Files,
then writes them, the sitemap and the search index in that order again: the order is put
back before anything is written, so the site stays byte for byte the same.
"""

from __future__ import annotations

from collections.abc import Collection

from mkdocs.structure.files import File, Files


class RenderOrder:
    """Moves the pages that must run to the end of the build's Files, and puts them back."""

    def __init__(self) -> None:
        self._site_order: list[File] = []

    def runs_last(self, files: Files, running: Collection[str]) -> None:
        """Render the pages whose `src_uri` is in `running` after every other page, keeping
        their own order; call `restore` before the pages are written."""
        self._site_order = list(files)
        for file in [page for page in files.documentation_pages() if page.src_uri in running]:
            files.remove(file)  # Files keep their order by insertion: to the end
            files.append(file)

    def restore(self, files: Files) -> None:
        """Put every file back in the order `runs_last` found them."""
        for file in self._site_order:
            files.remove(file)
            files.append(file)
        self._site_order = []
