"""Read the console transcripts a built page shows, to compare what readers take away with them."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from autograd_traced.page_html.consoles import PATH_BREAK, SHOWN_BLOCK_RE
from autograd_traced.running.snippets import SHOWN_TRACEBACK

TRACEBACK_HEADER = SHOWN_TRACEBACK.rstrip("\n").split("\n")


@dataclass(frozen=True)
class Shown:
    """One example as the page shows it."""

    code: str
    printed: list[str]  # the lines it printed, without the expected error
    error: str | None  # the expected error's last line, as shown: "RuntimeError: ..."


def page_transcripts(page_html: str) -> list[tuple[str, str]]:
    """(snippet path, transcript text) of every console block, in page order."""
    return [
        (
            match["path"].replace(PATH_BREAK, ""),
            html.unescape(re.sub(r"<[^>]+>", "", match["code"])),
        )
        for match in SHOWN_BLOCK_RE.finditer(page_html)
    ]


def examples(transcript: str) -> list[Shown]:
    """Split a console transcript into its examples: prompts start code, the rest is output."""
    parsed: list[tuple[list[str], list[str]]] = []
    for line in transcript.rstrip("\n").split("\n"):
        if line.startswith(">>> "):
            parsed.append(([line[4:]], []))
        elif (line.startswith("... ") or line == "...") and not parsed[-1][1]:
            parsed[-1][0].append(line[4:])
        else:
            parsed[-1][1].append(line)
    shown = []
    for code, output in parsed:
        error = None
        if TRACEBACK_HEADER[0] in output:
            start = output.index(TRACEBACK_HEADER[0])
            error, output = "\n".join(output[start + len(TRACEBACK_HEADER) :]), output[:start]
        shown.append(Shown("\n".join(code), output, error))
    return shown
