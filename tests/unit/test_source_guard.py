"""The source guard: every file created, changed or removed under the repository is named."""

from pathlib import Path

from autograd_traced.running import source_guard


def test_created_changed_and_removed_files_are_named_and_build_output_is_not(
    tmp_path: Path,
) -> None:
    for name in ("docs/index.md", "snippets/a.pycon", "snippets/b.pycon"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    before = source_guard.snapshot(str(tmp_path))
    (tmp_path / "docs/index.md").write_text("")
    (tmp_path / "snippets/a.pycon").unlink()
    (tmp_path / "snippets/leak.txt").write_text("litter")
    for made in ("site/index.html", ".pytest_cache/x", "src/__pycache__/m.pyc"):
        (tmp_path / made).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / made).write_text("")
    assert source_guard.changes(str(tmp_path), before) == [
        "created snippets/leak.txt",
        "removed snippets/a.pycon",
        "changed docs/index.md",
    ]


def test_a_watched_folder_is_seen_even_where_the_sources_are_not(tmp_path: Path) -> None:
    cache = tmp_path / ".cache" / "results"  # a dotted folder: skipped as a source
    cache.mkdir(parents=True)
    before = source_guard.snapshot(str(tmp_path), [str(cache)])
    (cache / "forged.json").write_text("{}")
    assert source_guard.changes(str(tmp_path), before) == []
    assert source_guard.changes(str(tmp_path), before, [str(cache)]) == [
        "created .cache/results/forged.json"
    ]
