"""Whether the session runs under pytest-xdist (`-n N`), and in which of its processes."""

from __future__ import annotations

import pytest


def parallel(config: pytest.Config) -> bool:
    """Whether pytest-xdist runs the tests in worker processes (`-n N`, N > 0)."""
    return bool(getattr(config.option, "numprocesses", None)) or hasattr(config, "workerinput")


def controller(config: pytest.Config) -> bool:
    """Whether this is pytest-xdist's controller: it collects and runs no test itself."""
    return parallel(config) and not hasattr(config, "workerinput")
