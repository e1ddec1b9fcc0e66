"""The benchmark's probe of whether a build imported torch, on two real builds: without it,
`execution_cost` could compare two builds that both import torch and claim a cost."""

from pathlib import Path

from benchmarks import builds


def test_the_torch_import_probe_tells_execution_on_from_off(tmp_path: Path) -> None:
    # KaTeX's node, which a build keeps for serve, is a child too: it is not the fork server.
    checks = builds.torch_import_checks(tmp_path)
    assert {name: imported for name, (imported, _) in checks.items()} == {
        "torch imported by a build with execution on": True,
        "torch imported by a build with execution off": False,
    }
