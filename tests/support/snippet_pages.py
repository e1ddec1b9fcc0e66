"""The docs' executable fences as Sybil examples: the root conftest collects them, and the
coverage tests parse pages with the very same parser."""

from pathlib import Path

from sybil import Sybil

from autograd_traced.plugin import configured
from autograd_traced.testing.sybil_pages import SnippetFenceParser


def snippet_pages(root: Path) -> tuple[SnippetFenceParser, Sybil]:
    """The parser of the site at `root` (its own root: the harness runs copies of the site in
    this process) and the Sybil that collects its docs/ with it."""
    # The build's own settings (the time limit) come from the plugin's config in mkdocs.yml.
    parser = SnippetFenceParser(root, configured(root / "mkdocs.yml").settings())
    # Absolute: Sybil reads a relative path from the file that constructs it.
    return parser, Sybil(parsers=[parser], patterns=["*.md"], path=str(root / "docs"))
