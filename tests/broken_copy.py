"""A copy of the site with an extra page per kind of break, for tests/test_harness.py.

The breaks live on pages and snippet files of their own, derived from the real ones, so the
copy's real pages stay untouched: its build of them must match the repository's own build byte
for byte (tests/test_site_build.py checks that), though made in another process and folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.build import CommandBuild, copy_site_sources

SETUP = "snippets/program/setup.pycon"
WRONG_OUTPUT = "snippets/broken/wrong_output.pycon"
NO_LONGER_RAISES = "snippets/broken/no_longer_raises.pycon"
RAISES = "snippets/broken/raises.pycon"
MISSING = "snippets/broken/nope.pycon"
MARKUP = "snippets/broken/markup.pycon"  # not a break: printed markup must show as text

# page -> its fences' options, in order
PAGES = {
    "wrong-output.md": [
        f'file="{SETUP}"',
        'file="snippets/computing_gradients/phase1_grad.pycon"',
        f'file="{WRONG_OUTPUT}"',
        'file="snippets/computing_gradients/untracked_input.pycon"',  # skipped: state unknown
    ],
    "no-longer-raises.md": [f'file="{SETUP}"', f'file="{NO_LONGER_RAISES}"'],
    "raises.md": [f'file="{SETUP}"', f'file="{RAISES}"'],
    "missing.md": [f'file="{MISSING}"'],
    "typo.md": [f'file="{SETUP}" sesion="typo"'],
    "markup.md": [f'file="{MARKUP}"'],
}
LINKS_PAGE = "links.md"
LINKS = "[gone](nowhere.md), [no anchor](computing-gradients.md#no-anchor), $\\frac{1}$"


def make(destination: Path) -> Path:
    """Copy the site's sources to `destination` and add the broken pages; returns the copy."""
    root = copy_site_sources(destination)
    derive(
        root,
        "computing_gradients/phase2_backward",
        WRONG_OUTPUT,
        "b.grad = -0.0817",
        "b.grad = -0.0818",
    )
    derive(
        root,
        "computation_graphs/second_call_fails",
        NO_LONGER_RAISES,
        "grad(loss, b)  #",
        "grad(loss, b, retain_graph=True)  #",
    )
    derive(
        root,
        "computation_graphs/nothing_saved",
        RAISES,
        ">>> grad(s, b)\n",
        ">>> raise ValueError('snippet broke')\n>>> grad(s, b)\n",
    )
    markup = "<script>alert('x')</script>"
    (root / MARKUP).write_text(f'>>> print("{markup}")\n{markup}\n')
    for name, fences in PAGES.items():
        body = "\n\n".join(f'```pycon exec="on" {options}\n```' for options in fences)
        (root / "docs" / name).write_text(f"# {name}\n\n{body}\n")
    (root / "docs" / LINKS_PAGE).write_text(f"# {LINKS_PAGE}\n\n{LINKS}\n")
    return root


def derive(root: Path, source: str, target: str, old: str, new: str) -> None:
    """Write `target`: the snippet `snippets/<source>.pycon` with `old` replaced by `new`."""
    text = (root / "snippets" / f"{source}.pycon").read_text()
    assert old in text, f"{old!r} not in {source}"
    (root / target).parent.mkdir(exist_ok=True)
    (root / target).write_text(text.replace(old, new, 1))


@dataclass(frozen=True)
class BrokenSite:
    workdir: Path  # removed at the end of the session
    root: Path  # the copy made by `make`
    build: CommandBuild  # `mkdocs build --strict` of it, into root/site
