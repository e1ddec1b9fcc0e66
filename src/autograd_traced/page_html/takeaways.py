"""What a page lets the reader take away, wired into the built HTML and the site's files.

- Each console block's copy button copies the code only: Material copies the `data-copy`
  attribute of the nearest ancestor that has one, instead of the block's visible text.
- Each block's title, the snippet's path, links to the snippet file, published with the site
  as text (`.pycon.txt`): a static host sends an unknown `.pycon` as a download, which a
  reader clicking the title did not ask for.
- A page listed in `downloads` offers its program as a script and a notebook, written next to
  the page's HTML and linked under its title: the console blocks the caller hands over (the
  lab's, without the collapsed answers), one section per heading.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path, PurePosixPath

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from autograd_traced.page_html.consoles import TITLED_BLOCK_RE, shown_path
from autograd_traced.page_html.program_files import (
    Console,
    console_code,
    notebook_json,
    script_text,
)

FIRST_HEADING_END_RE = re.compile(r"</h1>")
# What the published copy of a snippet adds to its path: a static host serves it as plain text.
AS_TEXT = ".txt"


class TakeawayError(Exception):
    """The page's console blocks do not match the snippets that ran for it."""


@dataclass(frozen=True)
class Download:
    path: str  # relative to the site directory
    text: str


class _CopiedAhead(File):
    """A published snippet, copied into the site by a thread while the pages run. MkDocs
    copies its static files on one core once every page is converted, one by one (0.3-0.4 s
    for the 718 snippets of a 40-page site); this copy overlaps the runs. MkDocs' own copy
    waits for it, and raises its error."""

    copied: Future[None]

    def copy_file(self, dirty: bool = False) -> None:
        self.copied.result()


def publish_snippets(
    files: Files, config: MkDocsConfig, used: Iterable[str], *, dirty: bool
) -> Files:
    """Serve the snippet files pages use (`used`, checked to be inside snippets/ by the plan),
    with the site, at their paths in the repository plus `AS_TEXT`; no other file under
    snippets/. Their copies are under way when this returns (`dirty`: only those changed)."""
    root = Path(config.config_file_path).parent
    copied: Future[None] = Future()
    published = []
    for src_uri in sorted(set(used)):
        file = _CopiedAhead.generated(config, src_uri + AS_TEXT, abs_src_path=str(root / src_uri))
        file.copied = copied
        published.append(file)
        files.append(file)

    def copy_all() -> None:
        try:
            for file in published:
                File.copy_file(file, dirty)
        except BaseException as error:  # reported where MkDocs copies static files
            copied.set_exception(error)
        else:
            copied.set_result(None)

    threading.Thread(target=copy_all, name="autograd-traced-snippet-copies", daemon=True).start()
    return files


def add_to_page(
    page_html: str,
    page: Page,
    files: Files,
    consoles: Sequence[Console],
    *,
    downloads: Sequence[Console] | None,
) -> tuple[str, list[Download]]:
    """The page's HTML with copy texts, snippet links and, unless `downloads` is None, links to
    a script and a notebook of those consoles (some of `consoles`); and the downloads."""
    page_html = _decorate_consoles(page_html, page, files, consoles)
    if not downloads:
        return page_html, []
    answers_left_out = len(downloads) < len(consoles)
    stem = PurePosixPath(page.file.src_uri).stem
    folder = PurePosixPath(page.file.dest_uri).parent
    torch_version = version("torch")
    title = page.title or stem
    left_out = {"answers_left_out": answers_left_out}
    files_taken = [
        Download(
            str(folder / f"{stem}.py"), script_text(title, downloads, torch_version, **left_out)
        ),
        Download(
            str(folder / f"{stem}.ipynb"),
            notebook_json(title, downloads, torch_version, **left_out),
        ),
    ]
    links = (
        '<p class="autograd-downloads" data-search-exclude="downloads">'
        "Run this page's program yourself: "
        f'<a href="{stem}.py" download>{stem}.py</a> (script) or '
        f'<a href="{stem}.ipynb" download>{stem}.ipynb</a> (Jupyter notebook), '
        "with the outputs shown here"
        + (", its checks and answers left out" if answers_left_out else "")
        + ".</p>"
    )
    page_html, found = FIRST_HEADING_END_RE.subn(lambda _: f"</h1>\n{links}", page_html, count=1)
    if not found:
        raise TakeawayError(f"{page.file.src_uri}: no title (h1) to put the download links under")
    return page_html, files_taken


def write(site_dir: str, downloads: Sequence[Download]) -> None:
    for download in downloads:
        target = Path(site_dir) / download.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(download.text, encoding="utf-8")


def _decorate_consoles(
    page_html: str, page: Page, files: Files, consoles: Sequence[Console]
) -> str:
    remaining = list(consoles)

    def decorate(match: re.Match[str]) -> str:
        path = match.group("path")
        if not remaining or remaining[0][0].snippet != path:
            raise TakeawayError(
                f"{page.file.src_uri}: console block {path} is not the next snippet that ran "
                f"({remaining[0][0].snippet if remaining else 'none left'})"
            )
        code = console_code(remaining.pop(0))
        snippet = files.get_file_from_path(path + AS_TEXT)
        if snippet is None:
            raise TakeawayError(f"{page.file.src_uri}: {path} is not published with the site")
        href = snippet.url_relative_to(page.file)
        return (
            f'<div class="highlight"{match.group("attrs")} data-copy="{html.escape(code)}">'
            f'<span class="filename"><a href="{href}">{shown_path(path)}</a></span>'
        )

    page_html = TITLED_BLOCK_RE.sub(decorate, page_html)
    if remaining:
        raise TakeawayError(
            f"{page.file.src_uri}: {len(remaining)} snippets ran without a console block"
        )
    return page_html
