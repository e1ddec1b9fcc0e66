"""What is still running: the tests check that nothing a page started outlives it."""

from __future__ import annotations

import contextlib
from pathlib import Path


def running(markers: tuple[str, ...]) -> list[str]:
    """The command lines of live processes that contain any of `markers` (zombies have none)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            command = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if any(marker in command for marker in markers):
                found.append(command)
    return found
