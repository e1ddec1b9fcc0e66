"""Ruff over the code in snippets/*.pycon: lint and format, reported at the snippet's own lines.

Ruff reads Python files, not console transcripts, so each snippet is turned into a Python
"shadow" with the same line numbers: the code after `>>>` and `...` stays, everything else (the
expected output) becomes a blank line.
Usage: `python -m autograd_traced.tools.lint_snippets [ROOT]`.
"""

from __future__ import annotations

import doctest
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

# A snippet uses names its page defined earlier (F821), imports for the next snippet (F401),
# echoes values with bare expressions, as a console session does (B018), and cannot have the
# blank line isort wants after imports (I001).
IGNORED = "F821,F401,B018,I001"


def shadow(text: str) -> str:
    lines = []
    for line in text.splitlines():
        if line.startswith((">>> ", "... ")) or line in (">>>", "..."):
            lines.append(line[4:])
        else:
            lines.append("")
    return "\n".join(lines) + "\n"


def lint(root: Path, paths: Sequence[Path]) -> list[str]:
    """Problems in the snippets, each naming `file:line`; empty when ruff is happy.

    Two ruff runs in all, each over files in a temporary folder: `check` over the shadows,
    `format` over each example alone. Run from `root`, ruff uses the project's settings.
    """
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shadows: dict[str, str] = {}  # shadow file -> snippet name
        examples: dict[Path, tuple[str, doctest.Example]] = {}
        for path in paths:
            name = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            shadow_file = work / "shadows" / f"{name}.py"
            shadow_file.parent.mkdir(parents=True, exist_ok=True)
            shadow_file.write_text(shadow(text), encoding="utf-8")
            shadows[str(shadow_file)] = name
            for example in doctest.DocTestParser().get_examples(text):
                example_file = work / "examples" / f"{len(examples)}.py"
                example_file.parent.mkdir(exist_ok=True)
                example_file.write_text(example.source, encoding="utf-8")
                examples[example_file] = (name, example)

        checked = _ruff(root, "check", "--ignore", IGNORED, "--output-format", "concise", *shadows)
        problems = []
        for line in checked.stdout.splitlines():
            shadow_file, _, finding = line.partition(":")
            if shadow_file in shadows:
                problems.append(f"{shadows[shadow_file]}:{finding}")
        if examples:
            _ruff(root, "format", *map(str, examples))  # rewrites the copies in place
        for example_file, (name, example) in examples.items():
            formatted = example_file.read_text(encoding="utf-8")
            if formatted != example.source:
                where = f"{name}:{example.lineno + 1}"
                problems.append(f"{where}: not ruff-formatted, ruff writes {formatted.strip()!r}")
        return problems


def _ruff(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else ".").resolve()
    files = sorted((root / "snippets").rglob("*.pycon"))
    if not files:
        print("no snippets found under", root / "snippets")
        return 1
    problems = lint(root, files)
    print("\n".join(problems) or f"{len(files)} snippets: ruff check and format clean")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
