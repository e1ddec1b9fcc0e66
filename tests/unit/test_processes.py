"""A page's process: the repository read-only for it, whoever runs the build."""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from autograd_traced.running import processes

NOBODY = 65534
PR_SET_DUMPABLE = 4


def write_after_read_only(folder: Path, *, as_nobody: bool) -> int:
    """In a child: (become nobody,) make `folder` read-only, try to write in it; the errno."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            if as_nobody:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
                # As a user who started as this one: changing user made /proc/self root's.
                ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 1)
            code = 98 if not processes.read_only(str(folder)) else 0
            if code == 0:
                (folder / "leak.txt").write_text("litter")
        except OSError as error:
            code = error.errno or 97
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("as_nobody", [False, True], ids=["this user", "another user"])
def test_the_folder_is_read_only_for_root_and_for_any_other_user(as_nobody: bool) -> None:
    if as_nobody and os.geteuid() != 0:
        pytest.skip("becoming another user needs root; this user is tested by the other case")
    # In /tmp (pytest's folder is root's only), writable by anyone: only the mount refuses.
    folder = Path(tempfile.mkdtemp(prefix="autograd-traced-read-only-"))
    try:
        folder.chmod(0o777)
        assert write_after_read_only(folder, as_nobody=as_nobody) == errno.EROFS
        assert not (folder / "leak.txt").exists()
    finally:
        shutil.rmtree(folder)
