"""The one registry of executable fence kinds: each language, its options and the values they
take, what it requires, and whether it shares the page's namespace.

Everything that reads fences reads this: the fence grammar (which fences execute), the page
plan (which options are right, before anything runs), the plugin (which fences it registers
with SuperFences) and the tests. A new option is one entry here, and the one place that
honours it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

ANY = None  # an option's values: any non-empty text
ON_OFF = ("on", "off")


@dataclass(frozen=True)
class FileOption:
    """What a `file=` option may name: a file of this suffix under this folder."""

    folder: str  # relative to the repository root, with its trailing slash
    suffix: str


QUESTION = '!!! question "'  # a Material admonition: what the page asks its reader


@dataclass(frozen=True)
class Pairing:
    """An option value that holds only with the page around it: the text that must come
    between the previous fence and this one, and the options it cannot be combined with."""

    before: str
    why: str  # what the option is for, said in its error
    excludes: Mapping[str, str] = field(default_factory=dict)  # option -> the value it conflicts


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
    paired: Mapping[tuple[str, str], Pairing] = field(default_factory=dict)  # (option, value)

    def executable(self, options: Mapping[str, str], unreadable: str) -> bool:
        return self.always_executable or bool(options or unreadable)


KINDS: dict[str, FenceKind] = {
    kind.language: kind
    for kind in (
        FenceKind(
            "pycon",
            {"exec": ("on",), "file": ANY, "trace": ON_OFF, "timeout": ANY, "show": ("code",)},
            required="file",
            stateful=True,
            file=FileOption("snippets/", ".pycon"),
            time_limit="timeout",
            always_executable=False,
            # Predict, then see: the code, and its output collapsed under "Run it".
            paired={
                ("show", "code"): Pairing(
                    before=QUESTION,
                    why="it hides the output until the reader has answered a question",
                    excludes={"trace": "on"},  # the player would show every output
                )
            },
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
