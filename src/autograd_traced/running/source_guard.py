"""The sources as a page found them: a page that created, changed or removed any file of
the repository fails, named. Pages run in a folder of their own with the repository
read-only where Linux allows it (`processes.read_only`); this is what checks it, and what
remains where it does not."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

# Not sources: what builds, tests and tools write (the site, caches, environments).
SKIPPED = frozenset({"site", "node_modules", "__pycache__"})

# path -> (size, modification time, status-change time, inode). The status-change time is
# the kernel's: a page that writes a file and sets its modification time back changes it.
Snapshot = dict[str, tuple[int, int, int, int]]


def snapshot(root: str, watched: Sequence[str] = ()) -> Snapshot:
    """The sources under `root`, and every file under the `watched` folders (skipped or not:
    the results cache), by path relative to `root`. A symbolic link is a file here, never
    followed: one to a folder is named too."""
    files: Snapshot = {}
    _walk(root, "", files, skip=True)
    for top in watched:
        _walk(top, os.path.relpath(top, root) + os.sep, files, skip=False)
    return files


def _walk(folder: str, relative: str, files: Snapshot, *, skip: bool) -> None:
    # Paths made by concatenation, not `os.path.relpath` per file: a page's run walks the
    # repository once, and relpath was half of what a walk cost.
    try:
        entries = list(os.scandir(folder))
    except OSError:  # removed meanwhile, or unreadable: what os.walk does too
        return
    for entry in entries:
        name = entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if not (skip and (name in SKIPPED or name.startswith("."))):
                    _walk(entry.path, relative + name + os.sep, files, skip=skip)
                continue
            stat = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        files[relative + name] = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def differences(before: Snapshot, after: Snapshot) -> list[str]:
    """What differs between two snapshots: each path, said as created, changed or removed."""
    said = [f"created {path}" for path in sorted(after.keys() - before.keys())]
    said += [f"removed {path}" for path in sorted(before.keys() - after.keys())]
    said += [
        f"changed {path}"
        for path in sorted(before.keys() & after.keys())
        if before[path] != after[path]
    ]
    return said


class SharedWalks:
    """The guard for pages that run side by side, one walk of the repository per page
    instead of two: a page's "before" is the newest walk that had ended when it started
    (the walk after the page before it), or a walk of its own when no page is running.

    A change made while a page runs lies between its "before" and its own walk after, so it
    is never missed; one made since that "before" and the page's start is said for the page
    too (it ran while the repository changed). With no page running, the next page walks
    afresh: edits between two builds, or two tests, are nobody's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._latest: dict[tuple[str, tuple[str, ...]], Snapshot] = {}

    def before(self, root: str, watched: Sequence[str] = ()) -> Snapshot:
        """Call as the page starts; then `after` once it has ended, whatever happened."""
        with self._lock:
            self._running += 1
            latest = self._latest.get((root, tuple(watched)))
        return snapshot(root, watched) if latest is None else latest

    def after(self, root: str, before: Snapshot, watched: Sequence[str] = ()) -> list[str]:
        """What changed since the page's `before`, said as `differences` says it."""
        walked = snapshot(root, watched)
        with self._lock:
            self._running -= 1
            if self._running:
                self._latest[(root, tuple(watched))] = walked
            else:
                self._latest.clear()
        return differences(before, walked)
