"""Page runs kept on disk across builds, by the plan's content key (`PagePlan.key`).

An entry is plain JSON: what the page's process reported, as the verdict read it, and the
environment it ran in; never a pickle, so reading one runs no code. The build's process writes
it, atomically (a temporary file, then `os.replace`), for a page that passed, once every page
of the build has run; a page's process cannot write it (the folder is inside the repository,
read-only there, and the source guard watches it where that is not available).

Read back, an entry goes through the verdict again, against the transcripts of the plan (the
runner's job), so an edited transcript is checked again. An entry that cannot be read, of
another format, recorded for another environment or another key, is ignored with a message,
never trusted: the page runs.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from autograd_traced.running.plan import PagePlan, environment

FORMAT = 1  # a new layout of an entry: every older entry is ignored
RELEASE = "torch-release.json"  # the release torch itself names, for the footer
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")  # what the cache may remove: its own entries only

log = logging.getLogger("mkdocs.plugins.autograd_traced")


class ResultsCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._kept: dict[str, dict[str, object]] = {}  # file name -> entry, written by `write`
        self._lock = threading.Lock()

    def empty(self) -> bool:
        """Whether no run is stored (a first build): every page will run."""
        return not any(path.name != RELEASE for path in self._entries())

    def recall(self, plan: PagePlan) -> list[object] | None:
        """The reports stored for this plan, or None: none stored, or one not to trust."""
        return self._read(f"{plan.key}.json", "reports", key=plan.key)

    def ignore(self, plan: PagePlan, why: str) -> None:
        """Say why the entry stored for this plan is not used (the runner's verdict on it)."""
        return _ignored(self.folder / f"{plan.key}.json", why)

    def keep(self, plan: PagePlan, reports: list[object]) -> None:
        """Store this plan's reports at the next `write`."""
        entry = {"key": plan.key, "page": plan.page, "reports": reports}
        with self._lock:
            self._kept[f"{plan.key}.json"] = entry

    def release(self) -> str | None:
        """The torch release recorded by a build in this environment (`2.13.0+cpu`)."""
        release = self._read(RELEASE, "release")
        return release if isinstance(release, str) else None

    def keep_release(self, release: str) -> None:
        with self._lock:
            self._kept[RELEASE] = {"release": release}

    def write(self, *, only: Iterable[str] | None = None) -> None:
        """Write what was kept; with `only` (the keys of a whole build), remove every other
        entry, so the cache holds the current site's results and nothing older."""
        with self._lock:
            kept, self._kept = self._kept, {}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            for name, entry in kept.items():
                data = {"format": FORMAT, "environment": environment(), **entry}
                _write_atomically(self.folder / name, data)
            if only is not None:
                current = {f"{key}.json" for key in only}
                for path in self._entries():
                    if path.name not in current and path.name != RELEASE:
                        path.unlink(missing_ok=True)
        except OSError as error:  # a read-only checkout, a full disk: said, the site still built
            log.warning(
                "results cache %s not written (%s): the next build runs these pages again; "
                "AUTOGRAD_TRACED_CACHE=false turns the cache off",
                self.folder,
                error,
            )

    def clear(self, why: str) -> None:
        """Forget every entry (a page's process changed the folder: nothing in it is trusted)."""
        with self._lock:
            self._kept.clear()
        log.info("results cache %s cleared: %s", self.folder, why)
        for path in self._entries():
            path.unlink(missing_ok=True)

    def _entries(self) -> list[Path]:
        """The files this cache wrote (and may remove): nothing else in its folder."""
        if not self.folder.is_dir():
            return []
        return [p for p in self.folder.iterdir() if _ENTRY.fullmatch(p.name) or p.name == RELEASE]

    def _read(self, name: str, field: str, key: str | None = None) -> object:
        path = self.folder / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:  # a truncated file, bytes that are not UTF-8
            return _ignored(path, f"it cannot be read as JSON ({error})")
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return _ignored(path, f"it is not an entry of format {FORMAT}")
        if (recorded := data.get("environment")) != environment():
            return _ignored(path, f"it was recorded for {_difference(recorded)}")
        if key is not None and data.get("key") != key:
            return _ignored(path, "it names another key than its own")
        return data.get(field)


def _ignored(path: Path, why: str) -> None:
    log.info("results cache: ignored %s: %s; the page runs", path.name, why)


def _difference(recorded: object) -> str:
    """What differs from this environment, for the message: `torch 2.14.1 (this is 2.13.0)`."""
    if not isinstance(recorded, dict):
        return "no environment"
    now = environment()
    differs = [name for name in now if recorded.get(name) != now[name]]
    return ", ".join(
        f"{name} {recorded.get(name)!r:.60} (this is {now[name]!r:.60})" for name in differs
    )


def _write_atomically(path: Path, data: dict[str, object]) -> None:
    """A reader sees the old file or the new one, never half of one."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(data, file)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
