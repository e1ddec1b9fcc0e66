"""The console block's markup, written once: how pymdownx.highlight renders a snippet's
transcript, and what the build adds to it. Every module (and test) that finds console blocks
or their tracebacks in a page's HTML reads them with these."""

from __future__ import annotations

import re

CONSOLE_BLOCK = '<div class="highlight">'  # how a highlighted block opens
# Transcripts stay out of the search index, which every page downloads: the prose says what
# each one does (and search_aside keeps the search plugin from parsing them at all).
SEARCH_EXCLUDED = "data-search-exclude"

# A console block as highlighted, titled with its snippet's path (before takeaways link it).
TITLED_BLOCK_RE = re.compile(
    r'<div class="highlight"(?P<attrs>[^>]*)><span class="filename">'
    r"(?P<path>snippets/[^<]+\.pycon)</span>"
)
# A block's title may break after each slash of its path, never inside a name (a phone
# would break "second_call_fai|ls.pycon" otherwise): browsers do not break at slashes.
PATH_BREAK = "<wbr>"
# A console block of the built page: its title (the snippet's path, a link) and its code.
SHOWN_BLOCK_RE = re.compile(
    r'<div class="highlight"[^>]*><span class="filename">(?:<a [^>]*>)?'
    rf"(?P<path>[^<]+(?:{PATH_BREAK}[^<]+)*)"
    r"(?:</a>)?</span><pre>.*?<code>(?P<code>.*?)</code>",
    re.DOTALL,
)


def shown_path(path: str) -> str:
    """A snippet's path as a block's title shows it: it may break after each slash."""
    return path.replace("/", "/" + PATH_BREAK)


# An expected error in a highlighted transcript: from the traceback's first line to the next
# prompt or the end of the block, less the newline that ends it.
TRACEBACK_RE = re.compile(
    r'<span class="gt">.*?(?=\n*(?:<span class="gp">|</code>))', flags=re.DOTALL
)
