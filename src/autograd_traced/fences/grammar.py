"""The one fence grammar: where a page's fenced blocks are and which of them execute.

The build (which checks that every executable fence ran), the Sybil parser (one test per
executable fence) and the coverage and prose-number tests all read Markdown through
`find_fences`, so none of them can see a fence the others miss.

It follows SuperFences, which renders the fences: a fence opens with three or more backticks
or tildes at any indentation (so fences in admonitions, tabs and lists count), closes with a
line of the same character, at least as long, and anything between is its body (a fence
shown inside a longer fence is text, not a fence).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from autograd_traced.fences.registry import KINDS

_OPENING = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LANGUAGE = re.compile(r"[ \t]*\.?(?P<language>[\w#.+-]+)(?=[ \t{]|$)")
# key="value", key='value' or a bare key, as SuperFences reads them.
_OPTION = re.compile(
    r"""[ \t]*(?P<key>[a-zA-Z][a-zA-Z0-9_]*)(?:=(?P<quote>["'])(?P<value>.*?)(?P=quote))?"""
)


@dataclass(frozen=True)
class Fence:
    """One fenced block of a page."""

    language: str
    options: dict[str, str]
    line: int  # 1-based line of the opening fence in the page
    start: int  # character offsets of the whole block, closing fence included
    end: int
    body: str
    indent: str = ""  # the opening fence's indentation: inside an admonition, a tab, a list
    unreadable: str = ""  # what of the info string could not be read as options

    @property
    def executable(self) -> bool:
        """A fence of a registered kind; a `pycon` fence only with options (else it is an
        ordinary console block), which are then checked."""
        kind = KINDS.get(self.language)
        return kind is not None and kind.executable(self.options, self.unreadable)

    @property
    def label(self) -> str:
        """What a reader of a failure message recognises the fence by."""
        return self.options.get("file") or self.options.get("of") or self.language


def find_fences(markdown: str) -> list[Fence]:
    """Every fenced block of the page, in order (not the fences shown inside them)."""
    fences: list[Fence] = []
    lines = markdown.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    index = 0
    while index < len(lines):
        opening = _OPENING.match(lines[index].rstrip("\r\n"))
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            index += 1
            continue
        marker = opening["fence"]
        closing = re.compile(rf"^[ \t]*{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end].rstrip("\r\n")):
            end += 1
        body = "".join(lines[index + 1 : end])
        stop = offsets[min(end + 1, len(lines))]
        language, options, unreadable = parse_info(opening["info"])
        fences.append(
            Fence(
                language,
                options,
                index + 1,
                offsets[index],
                stop,
                body,
                opening["indent"],
                unreadable,
            )
        )
        index = end + 1
    return fences


def executable_fences(markdown: str) -> list[Fence]:
    return [fence for fence in find_fences(markdown) if fence.executable]


def parse_info(info: str) -> tuple[str, dict[str, str], str]:
    """(language, options, unreadable rest) of a fence's info string."""
    text = info.strip()
    if text.startswith("{") and text.endswith("}"):  # ```{.pycon exec="on"}
        text = text[1:-1].strip()
    match = _LANGUAGE.match(text)
    if match is None:
        return "", {}, text
    language, rest = match["language"], text[match.end() :]
    options: dict[str, str] = {}
    while rest.strip():
        option = _OPTION.match(rest)
        if option is None or (option.end() < len(rest) and rest[option.end()] not in " \t"):
            return language, options, rest.strip()
        # A bare key reads as its own name, as SuperFences reads it.
        key = option["key"]
        options[key] = option["value"] if option["value"] is not None else key
        rest = rest[option.end() :]
    return language, options, ""


def snippet_files(markdown: str) -> list[str]:
    """The snippet each executable pycon fence of a page runs, in page order."""
    return [
        fence.options.get("file", "")
        for fence in executable_fences(markdown)
        if fence.language == "pycon"
    ]


def diagram_files(markdown: str) -> list[str]:
    """The hand-made diagram each `diagram` fence of a page draws, in page order."""
    return [
        fence.options.get("file", "")
        for fence in executable_fences(markdown)
        if fence.language == "diagram"
    ]


def _between_fences(markdown: str) -> Iterator[tuple[int, str]]:
    """Each stretch of the page outside its fenced blocks, with where it starts."""
    position = 0
    for fence in find_fences(markdown):
        yield position, markdown[position : fence.start]
        position = fence.end
    yield position, markdown[position:]


def prose(markdown: str) -> str:
    """The page without its fenced blocks: what the reader reads as text."""
    return "".join(piece for _, piece in _between_fences(markdown))


_HEADING = re.compile(r"^#{1,6}[ \t]+(?P<title>.+?)[ \t#]*$", re.MULTILINE)
_COLLAPSED = re.compile(r"^[ \t]*\?\?\?\+?[ \t]")  # a pymdownx.details block, closed at first


Headings = list[tuple[int, str]]  # (where a heading starts in the page, its title)


def headings(markdown: str) -> Headings:
    """The page's headings in page order, read once (headings inside fences are code)."""
    return [
        (start + match.start(), match["title"])
        for start, piece in _between_fences(markdown)
        for match in _HEADING.finditer(piece)
    ]


def section_of(titles: Headings, fence: Fence) -> str:
    """The title of the last of the page's `headings` before `fence`."""
    before = bisect.bisect_left(titles, fence.start, key=lambda heading: heading[0])
    return titles[before - 1][1] if before else ""


def in_collapsed_block(markdown: str, fence: Fence) -> bool:
    """Whether `fence` sits in a `???` block (the lab's answers): the last line before it that
    is indented less than the fence opens one."""
    depth = len(fence.indent.expandtabs(4))
    if not depth:
        return False
    for line in reversed(markdown[: fence.start].splitlines()):
        if line.strip() and len(line) - len(line.lstrip()) < depth:
            return bool(_COLLAPSED.match(line))
    return False
