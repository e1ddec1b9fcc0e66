"""The sources as a page found them: a page that created, changed or removed any file of
the repository fails, named. Pages run in a folder of their own with the repository
read-only where Linux allows it (`processes.read_only`); this is what checks it, and what
remains where it does not."""

from __future__ import annotations

import os
from collections.abc import Sequence

# Not sources: what builds, tests and tools write (the site, caches, environments).
SKIPPED = frozenset({"site", "node_modules", "__pycache__"})

Snapshot = dict[str, tuple[int, int, int]]  # path -> (size, modification time, inode)


def snapshot(root: str, watched: Sequence[str] = ()) -> Snapshot:
    """The sources under `root`, and every file under the `watched` folders (skipped or not:
    the results cache), by path relative to `root`."""
    files: Snapshot = {}
    for top in (root, *watched):
        for folder, subfolders, names in os.walk(top):
            if top == root:
                subfolders[:] = [
                    n for n in subfolders if n not in SKIPPED and not n.startswith(".")
                ]
            for name in names:
                path = os.path.join(folder, name)
                try:
                    stat = os.lstat(path)
                except OSError:
                    continue
                files[os.path.relpath(path, root)] = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return files


def changes(root: str, before: Snapshot, watched: Sequence[str] = ()) -> list[str]:
    """What differs from `before`: each path, said as created, changed or removed."""
    after = snapshot(root, watched)
    said = [f"created {path}" for path in sorted(after.keys() - before.keys())]
    said += [f"removed {path}" for path in sorted(before.keys() - after.keys())]
    said += [
        f"changed {path}"
        for path in sorted(before.keys() & after.keys())
        if before[path] != after[path]
    ]
    return said
