"""Copies of the site with extra pages, for tests/site/test_harness.py.

- The passing copy adds pages that must pass: fences written in every form the grammar
  accepts, two pages that each try to leak process-wide state into the other, and printed
  markup. The real `mkdocs build --strict` builds it; its real pages must match the
  repository's own build byte for byte (tests/site/test_site_build.py checks that), though made in
  another process and folder.
- The broken copy adds those and one page per kind of break, derived from the real pages:
  the real `mkdocs build -q` (quiet, not strict: the hardest case) must fail on every one,
  and so must its snippet tests, each naming the page, the snippet and the line.
- The links copy adds a page with a broken link, anchor and formula (strict mode's own
  checks, which a failed fence would stop before they run).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.build import CommandBuild, copy_site_sources

SETUP = "snippets/program/setup.pycon"
PHASE1 = "snippets/computing_gradients/phase1_grad.pycon"
WRONG_OUTPUT = "snippets/broken/wrong_output.pycon"
NO_LONGER_RAISES = "snippets/broken/no_longer_raises.pycon"
RAISES = "snippets/broken/raises.pycon"
MISSING = "snippets/broken/nope.pycon"
UNPARSABLE = "snippets/broken/unparsable.pycon"
BAD_REPR = "snippets/broken/bad_repr.pycon"
EXITS = "snippets/broken/exits.pycon"
KILLS = "snippets/broken/kills.pycon"
CRASHES = "snippets/broken/crashes.pycon"  # a segmentation fault, named by its signal
DELETES_BUILTIN = "snippets/broken/deletes_builtin.pycon"
HOARDS = "snippets/broken/hoards_memory.pycon"  # asks for more than a page's memory limit
ENDLESS = "snippets/broken/endless.pycon"
BAD_DOT = "docs/diagrams/broken-syntax.dot"
NO_ALT = "docs/diagrams/broken-no-alt.dot"
DENSE = "docs/diagrams/broken-dense.dot"  # a complete digraph: Graphviz takes minutes
PATCHES_CHECKER = "snippets/broken/patches_checker.pycon"
PICKLES = "snippets/broken/pickles.pycon"
PWNED = "AUTOGRAD_TRACED_PWNED"  # set in the build's process if a page's pickle ran there
STARTS_PROCESSES = "snippets/broken/starts_processes.pycon"  # not a break: all must die
MARKERS = tuple(f"autograd-traced-outlives-{n}" for n in (1, 2, 3))  # in their command lines
WRITES_SOURCES = "snippets/broken/writes_sources.pycon"
OUTSIDE = "snippets/../../outside/secret.pycon"  # a transcript beside the repository
LINKS_OUTSIDE = "snippets/broken/links_outside.pycon"  # a link to that file
UNUSED_LINK = "snippets/h/unused.pycon"  # not a break: a link to /etc/passwd no page uses
MARKUP = "snippets/broken/markup.pycon"  # not a break: printed markup must show as text
ISOLATION = "snippets/broken/isolation.pycon"  # not a break: run by two pages, both pass
STRAY_OUTPUT = "snippets/broken/stray_output.pycon"  # not a break: escapes past the transcript
STRAY_SHOWN = ("\\x1b]0;pwned\\x07\\x1b[2J fd 2", "\\x1b[31m __stderr__", "\\x1b[32m child")


def run(options: str) -> str:
    """The info string of a pycon fence that executes."""
    return f'pycon exec="on" {options}'


PROSE = "prose:"  # a page's entry that is a line of text, not a fence


# Each page -> the info strings of its fences (or a line of PROSE), in order.
BROKEN = {
    "wrong-output.md": [
        run(f'file="{SETUP}"'),
        run(f'file="{PHASE1}"'),
        run(f'file="{WRONG_OUTPUT}"'),
        run('file="snippets/computing_gradients/untracked_input.pycon"'),  # skipped
    ],
    "no-longer-raises.md": [run(f'file="{SETUP}"'), run(f'file="{NO_LONGER_RAISES}"')],
    "raises.md": [run(f'file="{SETUP}"'), run(f'file="{RAISES}"')],
    "missing.md": [run(f'file="{MISSING}"')],
    "typo.md": [run(f'file="{SETUP}" sesion="typo"')],
    "unparsable.md": [run(f'file="{UNPARSABLE}"')],
    "bad-repr.md": [run(f'file="{BAD_REPR}" trace="on"')],
    "bad-diagrams.md": [
        f'diagram exec="on" file="{BAD_DOT}"',
        f'diagram exec="on" file="{NO_ALT}"',
    ],
    "dense-diagram.md": [f'diagram exec="on" file="{DENSE}" timeout="1"'],
    "exits.md": [run(f'file="{EXITS}"')],
    "kills.md": [run(f'file="{KILLS}"')],
    "crashes.md": [run(f'file="{CRASHES}"')],
    "deletes-builtin.md": [run(f'file="{DELETES_BUILTIN}"')],
    "hoards-memory.md": [run(f'file="{HOARDS}"')],
    "endless.md": [run(f'file="{ENDLESS}" timeout="1"')],
    "misspelt.md": [
        f'pycon exce="on" file="{SETUP}"',
        run(f'file="{SETUP}" trace="yes"'),
        run(""),  # no file
        'diagram exce="on" file="docs/diagrams/debugging-checkpoints.dot"',  # the page's last fence
    ],
    "unquoted.md": [f"pycon exec=on file={SETUP}"],
    # Hostile: switch the output check off, or smuggle code into the build's process that
    # passes every page (the victim is wrong-output.md, which must stay red).
    "patches-checker.md": [run(f'file="{PATCHES_CHECKER}"')],
    "pickles.md": [run(f'file="{PICKLES}"')],
    # Hostile: empty the home page of the repository, found in the runner's frames.
    "writes-sources.md": [run(f'file="{WRITES_SOURCES}"')],
    # Files outside the repository, by '..' or by a link.
    "outside.md": [run(f'file="{OUTSIDE}"')],
    "links-outside.md": [run(f'file="{LINKS_OUTSIDE}"')],
    "unpaired.md": [
        run(f'file="{SETUP}" show="code"'),  # nothing asks the reader first
        f'{PROSE}!!! question "Predict: what will it print?"',
        run(f'file="{PHASE1}" show="code" trace="on"'),  # the player would show the output
    ],
}

PASSING = {
    "markup.md": [run(f'file="{MARKUP}"')],
    "isolation-a.md": [run(f'file="{ISOLATION}"')],
    "isolation-z.md": [run(f'file="{ISOLATION}"')],
    "starts-processes.md": [run(f'file="{STARTS_PROCESSES}"')],
    "stray-output.md": [run(f'file="{STRAY_OUTPUT}"')],
}
FENCE_FORMS_PAGE = "fence-forms.md"  # must pass: every form of fence runs, in build and tests
FENCE_FORMS = f"""# Fences in every form

~~~pycon exec="on" file="{SETUP}"
~~~

````pycon exec="on" file="snippets/computing_gradients/phase1_grad.pycon"
````

!!! note "Inside an admonition"
    ```pycon exec="on" file="snippets/computing_gradients/phase2_backward.pycon"
    ```

=== "Inside a tab"

    ```autograd-graph exec="on" of="loss" direction="backward"
    ```

1. Inside a list:

    ```diagram exec="on" file="docs/diagrams/debugging-checkpoints.dot"
    ```

````markdown
A fence shown inside a longer one is text, never run:
```pycon exec="on" file="{MISSING}"
```
````
"""
LINKS_PAGE = "links.md"
LINKS = "[gone](nowhere.md), [no anchor](computing-gradients.md#no-anchor), $\\frac{1}$"

ISOLATION_SNIPPET = """\
>>> import os, random, sys, warnings
>>> import numpy
>>> import torch
>>> print(torch.get_default_dtype(), torch.get_default_device(), torch.is_grad_enabled())
torch.float32 cpu True
>>> print(torch.is_anomaly_enabled(), torch.are_deterministic_algorithms_enabled())
False False
>>> print(torch.tensor(1 / 3), torch.get_num_threads() > 1 or os.cpu_count() == 1)
tensor(0.3333) True
>>> print(os.listdir(), os.environ.get("LEAK"), "/leak" in sys.path)
[] None False
>>> print(hasattr(torch, "leaked"), "leaked_module" in sys.modules)
False False
>>> print(any(f[0] == "error" for f in warnings.filters))
False
>>> print(f"{torch.rand(1).item():.4f} {random.random():.4f} {numpy.random.rand():.4f}")
0.4963 0.8444 0.5488
>>> torch.set_default_dtype(torch.float64)
>>> torch.set_default_device("meta")
>>> _ = torch.set_grad_enabled(False)
>>> torch.set_printoptions(precision=8)
>>> _ = torch.autograd.set_detect_anomaly(True)
>>> torch.use_deterministic_algorithms(True)
>>> torch.set_num_threads(1)
>>> _ = torch.manual_seed(1234)
>>> _ = open("written-by-a-page.txt", "w").write("a page's own folder")
>>> os.chdir("/")
>>> os.environ["LEAK"] = "1"
>>> sys.path.insert(0, "/leak")
>>> torch.leaked = True
>>> sys.modules["leaked_module"] = sys
>>> warnings.simplefilter("error")
"""


# A hostile snippet finds the repository in its runner's frames: its folder is not in it.
FIND_ROOT = """\
>>> import inspect
>>> frames = [frame.frame.f_locals for frame in inspect.stack()]
>>> root = next(local["plan"].root for local in frames if "plan" in local)
"""
PICKLES_SNIPPET = f"""\
>>> import doctest, json, pickle
>>> SMUGGLED = "import doctest, os; os.environ['{PWNED}'] = '1'; " \\
...     "doctest.OutputChecker.check_output = lambda *args: True"
>>> class Smuggled:
...     def __reduce__(self):
...         return (exec, (SMUGGLED,))
>>> pickle.dumps = lambda *args, **kwargs: pickle._dumps(Smuggled())
>>> json.dumps = lambda *args, **kwargs: pickle._dumps(Smuggled()).decode("latin-1")
>>> print("what it really prints")
what its transcript says
"""


STARTS_PROCESSES_SNIPPET = f"""\
>>> import os, subprocess, sys
>>> sleep = [sys.executable, "-c", "import time; time.sleep(1000)"]
>>> child = subprocess.Popen([*sleep, "{MARKERS[0]}"])
>>> escaped = subprocess.Popen([*sleep, "{MARKERS[1]}"], start_new_session=True)
>>> if os.fork() == 0:
...     os.execvp("sh", ["sh", "-c", "while :; do :; done", "{MARKERS[2]}"])
"""


def make_passing(destination: Path) -> Path:
    """Copy the site's sources to `destination` and add the passing pages; returns the copy."""
    root = copy_site_sources(destination)
    _add_passing(root)
    return root


def make_links(destination: Path) -> Path:
    root = copy_site_sources(destination)
    (root / "docs" / LINKS_PAGE).write_text(f"# {LINKS_PAGE}\n\n{LINKS}\n")
    return root


def make_broken(destination: Path) -> Path:
    """Copy the site's sources to `destination` and add every page; returns the copy."""
    root = copy_site_sources(destination)
    _add_passing(root)
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
    write(root, UNPARSABLE, ">>> x = 1\n>>>print(x)\n1\n")
    write(
        root,
        BAD_REPR,
        ">>> class Opaque:\n...     def __repr__(self):\n...         raise ValueError('no repr')\n"
        ">>> opaque = Opaque()\n",
    )
    write(root, EXITS, ">>> x = 1\n>>> raise SystemExit(0)\n")
    write(root, KILLS, ">>> import os\n>>> os._exit(0)\n")
    write(root, CRASHES, ">>> import os, signal\n>>> os.kill(os.getpid(), signal.SIGSEGV)\n")
    write(root, DELETES_BUILTIN, '>>> import builtins\n>>> del builtins.len\n>>> print("ok")\nok\n')
    # 3 GiB, past the 2 GiB limit: refused at once, never touched (nothing is allocated).
    write(root, HOARDS, ">>> hoard = bytearray(3 << 30)\n")
    write(root, ENDLESS, ">>> x = 1\n>>> while True:\n...     x += 1\n")
    write(
        root,
        PATCHES_CHECKER,
        ">>> import doctest\n"
        ">>> doctest.OutputChecker.check_output = lambda self, want, got, flags: True\n"
        '>>> print("what it really prints")\nwhat its transcript says\n',
    )
    write(root, PICKLES, PICKLES_SNIPPET)
    secret = root.parent / "outside" / "secret.pycon"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text(">>> print('a secret')\na secret\n")
    (root / LINKS_OUTSIDE).symlink_to(secret)
    write(root, WRITES_SOURCES, f"{FIND_ROOT}>>> open(f'{{root}}/docs/index.md', 'w').close()\n")

    write(root, BAD_DOT, "// alt: A diagram with a syntax error.\ndigraph { a -> }\n")
    write(root, NO_ALT, "digraph { a -> b }\n")
    edges = " ".join(f"n{a} -> n{b};" for a in range(60) for b in range(60) if a != b)
    write(root, DENSE, f"// alt: A complete digraph of 60 nodes.\ndigraph {{ {edges} }}\n")
    _write_pages(root, BROKEN)
    return root


# Written past the transcript, to the page's own stdout and stderr: the build's log must say
# it with every control character spelt out (STRAY_SHOWN), never send it to the terminal raw.
STRAY_OUTPUT_SNIPPET = r"""
>>> import os, subprocess, sys
>>> _ = os.write(2, b"\x1b]0;pwned\x07\x1b[2J fd 2\n")
>>> _ = sys.__stderr__.write("\x1b[31m __stderr__\n")
>>> _ = subprocess.run([sys.executable, "-c", "print('\\x1b[32m child')"], check=True)
>>> print("the transcript")
the transcript
""".lstrip()


def _add_passing(root: Path) -> None:
    # Out of the nav, which would change the real pages' HTML; and known, so strict passes.
    pages = "\n".join(f"  /{name}" for name in [*PASSING, FENCE_FORMS_PAGE, *BROKEN, LINKS_PAGE])
    with (root / "mkdocs.yml").open("a") as config:
        config.write(f"\nnot_in_nav: |\n{pages}\n")
    write(root, ISOLATION, ISOLATION_SNIPPET)
    write(root, STARTS_PROCESSES, STARTS_PROCESSES_SNIPPET)
    (root / UNUSED_LINK).parent.mkdir(parents=True, exist_ok=True)
    (root / UNUSED_LINK).symlink_to("/etc/passwd")
    write(root, STRAY_OUTPUT, STRAY_OUTPUT_SNIPPET)
    markup = "<script>alert('x')</script>"
    write(root, MARKUP, f'>>> print("{markup}")\n{markup}\n')
    _write_pages(root, PASSING)
    (root / "docs" / FENCE_FORMS_PAGE).write_text(FENCE_FORMS)


def _write_pages(root: Path, pages: dict[str, list[str]]) -> None:
    for name, fences in pages.items():
        body = "\n\n".join(
            info.removeprefix(PROSE) if info.startswith(PROSE) else f"```{info}\n```"
            for info in fences
        )
        (root / "docs" / name).write_text(f"# {name}\n\n{body}\n")


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def derive(root: Path, source: str, target: str, old: str, new: str) -> None:
    """Write `target`: the snippet `snippets/<source>.pycon` with `old` replaced by `new`."""
    text = (root / "snippets" / f"{source}.pycon").read_text()
    assert old in text, f"{old!r} not in {source}"
    write(root, target, text.replace(old, new, 1))


@dataclass(frozen=True)
class Copies:
    """The copies the harness builds with the real command, in the background."""

    workdir: Path  # removed at the end of the session
    passing: Path
    broken: Path
    passing_build: CommandBuild  # `mkdocs build --strict`, into passing/site
    broken_build: CommandBuild  # `mkdocs build -q`, into broken/site

    def stop(self) -> None:
        self.passing_build.stop()
        self.broken_build.stop()
