"""The one registry of executable fence kinds: each language, its options and the values they
take, what it requires, and whether it shares the page's namespace.

Everything that reads fences reads this: the fence grammar (which fences execute), the page
plan (which options are right, before anything runs), the plugin (which fences it registers
with SuperFences) and the tests. A new option is one entry here, and the one place that
honours it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

ANY = None  # an option's values: any non-empty text
ON_OFF = ("on", "off")


@dataclass(frozen=True)
class FileOption:
    """What a `file=` option may name: a file of this suffix under this folder."""

    folder: str  # relative to the repository root, with its trailing slash
    suffix: str


@dataclass(frozen=True)
class FenceKind:
    language: str
    options: Mapping[str, tuple[str, ...] | None]  # option -> the values it takes (ANY: text)
    required: str  # the option a fence of this kind cannot do without
    stateful: bool  # reads or changes the page's namespace: runs in the page's process
    file: FileOption | None = None  # what its `file=` names, if it takes one
    time_limit: str | None = None  # the option that sets its time limit, in seconds
    # A pycon fence without options is an ordinary console block, shown as written.
    always_executable: bool = True

    def executable(self, options: Mapping[str, str], unreadable: str) -> bool:
        return self.always_executable or bool(options or unreadable)


KINDS: dict[str, FenceKind] = {
    kind.language: kind
    for kind in (
        FenceKind(
            "pycon",
            {"exec": ("on",), "file": ANY, "trace": ON_OFF, "timeout": ANY},
            required="file",
            stateful=True,
            file=FileOption("snippets/", ".pycon"),
            time_limit="timeout",
            always_executable=False,
        ),
        FenceKind(
            "autograd-graph",
            {"exec": ("on",), "of": ANY, "direction": ("forward", "backward"), "alt": ANY},
            required="of",
            stateful=True,
        ),
        FenceKind(
            "diagram",
            {"exec": ("on",), "file": ANY, "timeout": ANY},
            required="file",
            stateful=False,
            file=FileOption("docs/", ".dot"),
            time_limit="timeout",  # Graphviz's, like a snippet's
        ),
    )
}
