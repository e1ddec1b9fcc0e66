"""The package's shape: the results key reads every module, and no module imports itself
back through others."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from autograd_traced.running.plan import PACKAGE, code_version


def test_the_results_key_changes_with_any_module_in_any_folder(tmp_path: Path) -> None:
    package = shutil.copytree(PACKAGE, tmp_path / "autograd_traced")
    before = code_version(package)
    player = package / "drawing" / "player.py"
    player.write_text(player.read_text() + "\n# changed\n")
    edited = code_version(package)
    assert edited != before, "an edit in a subfolder must invalidate cached page runs"
    (package / "running" / "new_module.py").write_text("X = 1\n")
    assert code_version(package) != edited, "a new module in a subfolder too"
    (package / "running" / "new_module.py").rename(package / "drawing" / "new_module.py")
    assert code_version(package) != edited, "and a module moved between folders"


def test_the_key_is_the_installed_package() -> None:
    assert (PACKAGE / "plugin.py").is_file() and (PACKAGE / "running" / "plan.py").is_file()


def imports(package: Path) -> dict[str, set[str]]:
    """Each module of the package -> the package's modules it imports, anywhere in its body."""
    modules = {
        ".".join(path.relative_to(package.parent).with_suffix("").parts).removesuffix(
            ".__init__"
        ): path
        for path in package.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found |= {f"{node.module}.{alias.name}" for alias in node.names} | {node.module}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        graph[name] = {target for target in found if target in modules and target != name}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle, as the modules it goes through; empty when there is none."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module], path[len(path) :] = "open", [module]
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = "done"
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_module_imports_itself_back() -> None:
    found = cycle(imports(PACKAGE))
    assert not found, "import cycle: " + " -> ".join(found)


def test_the_cycle_finder_finds_one(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.inner import b\n")
    (package / "inner" / "b.py").write_text("def f():\n    from pkg import a\n")
    assert cycle(imports(package)) == ["pkg.a", "pkg.inner.b", "pkg.a"]


TESTS = Path(__file__).resolve().parents[1]


def imports_of_other_tests(tests: Path) -> list[str]:
    """`file: import` for every test module importing a test module or a conftest: what tests
    share lives in tests/support."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        if "support" in path.relative_to(tests).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                names = [module.rsplit(".", 1)[-1], *(alias.name for alias in node.names)]
                if any(name.startswith("test_") or name == "conftest" for name in names):
                    found.append(f"{path.relative_to(tests)}: from {module} import ...")
    return found


def test_tests_import_helpers_from_support_only() -> None:
    found = imports_of_other_tests(TESTS)
    assert not found, "move what these share into tests/support:\n" + "\n".join(found)


def test_an_import_of_another_test_is_found(tmp_path: Path) -> None:
    (tmp_path / "browser").mkdir()
    (tmp_path / "browser" / "test_a.py").write_text("from .test_b import PAGES\n")
    (tmp_path / "browser" / "test_c.py").write_text("from .conftest import Recorder\n")
    (tmp_path / "browser" / "test_d.py").write_text("from tests.support.paths import ROOT\n")
    assert imports_of_other_tests(tmp_path) == [
        "browser/test_a.py: from .test_b import ...",
        "browser/test_c.py: from .conftest import ...",
    ]
