"""An N-article-page copy of the site, and the same Markdown under a plain Material config.

The copy keeps the real pages and adds copies of the articles (`computation-graphs-2.md`,
`computing-gradients-2.md`, ...) until it has N article pages; each copy runs its own copies of
the snippet files it names (`snippets/computation-graphs-2/...`), so editing one snippet changes
one page. `mkdocs-plain.yml` beside it builds the same pages with Material alone: no plugin,
no custom fences. SuperFences garbles a fence whose options it does not know, so the plain build
reads `docs-plain/`, where each executable fence is a plain code block: a pycon fence shows
its snippet's stored transcript (what a reader sees), the others are empty.
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from autograd_traced.fences.grammar import executable_fences, snippet_files
from autograd_traced.plugin import PLUGIN_NAME
from autograd_traced.tools.local_site import copy_site_sources

PLAIN_CONFIG = "mkdocs-plain.yml"
PLAIN_DOCS = "docs-plain"


class EnvValue(list):  # type: ignore[type-arg]
    """An `!ENV [VARIABLE, default]` value of mkdocs.yml, kept as written."""


class _Loader(yaml.SafeLoader):
    pass


class _Dumper(yaml.SafeDumper):
    pass


_Loader.add_constructor("!ENV", lambda loader, node: EnvValue(loader.construct_sequence(node)))
_Dumper.add_representer(
    EnvValue, lambda dumper, value: dumper.represent_sequence("!ENV", list(value))
)


def read_config(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)


def write_config(path: Path, config: dict[str, Any]) -> None:
    path.write_text(yaml.dump(config, Dumper=_Dumper, sort_keys=False), encoding="utf-8")


@dataclass(frozen=True)
class ScaledSite:
    root: Path
    article_pages: int
    # The last snippet of the last article's last copy: one page runs it, at every size.
    edited_snippet: Path

    @property
    def plain_config(self) -> Path:
        return self.root / PLAIN_CONFIG


def site_articles(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(title, page) of every article in the nav: the pages besides the home page."""
    return [
        (title, page)
        for entry in config["nav"]
        for title, page in entry.items()
        if page != "index.md"
    ]


def make_scaled_site(source: Path, destination: Path, article_pages: int) -> ScaledSite:
    """Copy the site at `source` to `destination` with `article_pages` article pages."""
    copy_site_sources(source, destination)
    config_path = destination / "mkdocs.yml"
    config = read_config(config_path)
    docs = destination / "docs"
    articles = site_articles(config)
    if article_pages < len(articles):
        raise ValueError(f"the site has {len(articles)} article pages; ask for at least that many")
    last_copy = {page: page for _, page in articles}
    for i in range(len(articles), article_pages):
        title, page = articles[i % len(articles)]
        copy = i // len(articles) + 1
        name = f"{Path(page).stem}-{copy}"
        markdown = (docs / page).read_text(encoding="utf-8")
        for snippet in set(snippet_files(markdown)):
            own = destination / "snippets" / name / snippet.removeprefix("snippets/")
            own.parent.mkdir(parents=True, exist_ok=True)
            own.write_bytes((destination / snippet).read_bytes())
        markdown = markdown.replace('file="snippets/', f'file="snippets/{name}/')
        (docs / f"{name}.md").write_text(markdown, encoding="utf-8")
        config["nav"].append({f"{title} ({copy})": f"{name}.md"})
        last_copy[page] = f"{name}.md"
    write_config(config_path, config)
    write_config(destination / PLAIN_CONFIG, plain_material(config))
    write_plain_docs(destination)
    last_page = docs / last_copy[articles[-1][1]]
    edited = snippet_files(last_page.read_text(encoding="utf-8"))[-1]
    return ScaledSite(destination, article_pages, destination / edited)


def plain_material(config: dict[str, Any]) -> dict[str, Any]:
    """The same config, reading docs-plain/, without the plugin (and so its fences)."""
    plain = {key: value for key, value in config.items() if key != "watch"}
    plain["docs_dir"] = PLAIN_DOCS
    plain["plugins"] = [
        plugin
        for plugin in config["plugins"]
        if not (isinstance(plugin, dict) and PLUGIN_NAME in plugin) and plugin != PLUGIN_NAME
    ]
    return plain


def write_plain_docs(site: Path) -> None:
    """docs/ again as docs-plain/, every executable fence turned into a plain code block."""
    shutil.copytree(site / "docs", site / PLAIN_DOCS)
    for page in (site / PLAIN_DOCS).rglob("*.md"):
        markdown = page.read_text(encoding="utf-8")
        pieces, position = [], 0
        for fence in executable_fences(markdown):
            indent = markdown[fence.start :].split("`", 1)[0].split("~", 1)[0]
            body = ""
            if fence.language == "pycon" and "file" in fence.options:
                transcript = (site / fence.options["file"]).read_text(encoding="utf-8")
                body = textwrap.indent(transcript, indent)
            pieces += [markdown[position : fence.start], f"{indent}```{fence.language}\n"]
            pieces += [body, f"{indent}```\n"]
            position = fence.end
        page.write_text("".join([*pieces, markdown[position:]]), encoding="utf-8")


def edit_snippet(snippet: Path, original: str, round_: int) -> None:
    """Save the snippet with a new, valid last line: new content every round, same outputs."""
    snippet.write_text(f"{original}>>> bench_edit = {round_}\n", encoding="utf-8")
