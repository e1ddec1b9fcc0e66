"""Ruff over the code in snippets/*.pycon: lint and format, reported at the snippet's own lines.

Ruff reads Python files, not console transcripts, so each snippet is turned into a Python
"shadow" with the same line numbers: the code after `>>>` and `...` stays, everything else (the
expected output) becomes a blank line. Usage: `python -m autograd_traced.lint_snippets [ROOT]`.
"""

from __future__ import annotations

import doctest
import subprocess
import sys
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


def lint(root: Path, path: Path) -> list[str]:
    """Problems in one snippet, each naming `file:line`; empty when ruff is happy."""
    name = path.relative_to(root).as_posix()
    text = path.read_text(encoding="utf-8")
    checked = _ruff(
        [
            "check",
            "--ignore",
            IGNORED,
            "--output-format",
            "concise",
            "--stdin-filename",
            f"{name}.py",
        ],
        shadow(text),
        root,
    )
    problems = [
        line.replace(f"{name}.py", name) for line in checked.stdout.splitlines() if ":" in line
    ]
    for example in doctest.DocTestParser().get_examples(text):
        formatted = _ruff(["format", "-"], example.source, root).stdout
        if formatted != example.source:
            where = f"{name}:{example.lineno + 1}"
            problems.append(f"{where}: not ruff-formatted, ruff writes {formatted.strip()!r}")
    return problems


def _ruff(args: list[str], source: str, root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        input=source,
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
    problems = [problem for file in files for problem in lint(root, file)]
    print("\n".join(problems) or f"{len(files)} snippets: ruff check and format clean")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
