"""Import torch once per process, its objects out of the garbage collector's way."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType


def import_torch() -> ModuleType:
    """torch brings a few hundred thousand long-lived objects that every full collection would
    walk again: a tenth of a build, a quarter of the test run. Frozen, the collector skips them.
    """
    if "torch" not in sys.modules:
        with long_lived_imports():
            import torch  # noqa: F401
    return sys.modules["torch"]


@contextmanager
def long_lived_imports() -> Iterator[None]:
    """Imports whose objects live as long as the process: no collection while they are made
    (each would walk every object made so far and find next to nothing: 0.8x the time of
    `import torch, torch._dynamo`, 6 pairs), then frozen with the few thousand cycles they
    left, a megabyte or so, never collected."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.freeze()
