"""The docs' executable fences as Sybil examples: the root conftest collects them, and the
coverage tests parse pages with the very same parser."""

from sybil import Sybil

from autograd_traced.plugin import configured
from autograd_traced.testing.sybil_pages import SnippetFenceParser
from tests.support.paths import ROOT

# The build's own settings (the time limit) come from the plugin's config in mkdocs.yml.
snippet_parser = SnippetFenceParser(ROOT, configured(ROOT / "mkdocs.yml").settings())
# Absolute: Sybil reads a relative path from the file that constructs it.
snippet_pages = Sybil(parsers=[snippet_parser], patterns=["*.md"], path=str(ROOT / "docs"))
