"""The source guard: every file created, changed or removed under the repository is named."""

import os
from pathlib import Path

import pytest

from autograd_traced.running import source_guard


def changes_now(
    root: str, before: source_guard.Snapshot, watched: list[str] | None = None
) -> list[str]:
    return source_guard.differences(before, source_guard.snapshot(root, watched or ()))


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
    assert changes_now(str(tmp_path), before) == [
        "created snippets/leak.txt",
        "removed snippets/a.pycon",
        "changed docs/index.md",
    ]


def test_a_watched_folder_is_seen_even_where_the_sources_are_not(tmp_path: Path) -> None:
    cache = tmp_path / ".cache" / "results"  # a dotted folder: skipped as a source
    cache.mkdir(parents=True)
    before = source_guard.snapshot(str(tmp_path), [str(cache)])
    (cache / "forged.json").write_text("{}")
    assert changes_now(str(tmp_path), before) == []
    assert changes_now(str(tmp_path), before, [str(cache)]) == [
        "created .cache/results/forged.json"
    ]


def test_a_file_written_back_to_its_old_size_and_time_is_still_named(tmp_path: Path) -> None:
    source = tmp_path / "docs" / "index.md"
    source.parent.mkdir()
    source.write_text("truth")
    before = source_guard.snapshot(str(tmp_path))
    stat = source.stat()
    source.write_text("forgd")  # the same size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # and its old time
    assert changes_now(str(tmp_path), before) == ["changed docs/index.md"]


def test_a_link_to_a_folder_is_named_and_not_followed(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("x")
    before = source_guard.snapshot(str(tmp_path))
    (tmp_path / "snippets").symlink_to(tmp_path / "docs", target_is_directory=True)
    assert changes_now(str(tmp_path), before) == ["created snippets"]


def test_pages_side_by_side_walk_once_each_and_no_change_is_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("x")
    walks = []
    real = source_guard.snapshot
    monkeypatch.setattr(source_guard, "snapshot", lambda *args: walks.append(args) or real(*args))
    root = str(tmp_path)
    guard = source_guard.SharedWalks()
    first = guard.before(root)  # nothing runs: a walk of its own
    second = guard.before(root)  # the first still runs: no walk newer than its own start
    assert len(walks) == 2
    (tmp_path / "docs" / "litter").write_text("")  # while both run
    assert guard.after(root, first) == ["created docs/litter"]
    third = guard.before(root)  # the walk after the first page is its "before"
    assert len(walks) == 3
    assert guard.after(root, second) == ["created docs/litter"]
    (tmp_path / "docs" / "index.md").write_text("y")
    assert guard.after(root, third) == ["changed docs/index.md"]
    # Nothing runs: an edit now (between two builds) is nobody's; the next page walks afresh.
    (tmp_path / "docs" / "index.md").write_text("z")
    fourth = guard.before(root)
    assert len(walks) == 6  # the three afters, and the first, second and fourth befores
    assert guard.after(root, fourth) == []
