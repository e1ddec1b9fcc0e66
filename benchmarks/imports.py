"""What `import torch` costs a fresh Python: the unit the execution targets are written in."""

from __future__ import annotations

from benchmarks.harness import PYTHON, Samples, base_env, interleave, run_timed


def measure_imports(repeat: int) -> Samples:
    """`python -c pass` and `python -c "import torch"`, interleaved."""
    env = base_env()
    return interleave(
        {
            "python_startup": lambda _: run_timed([PYTHON, "-c", "pass"], env=env).wall,
            "import_torch_gross": lambda _: run_timed([PYTHON, "-c", "import torch"], env=env).wall,
        },
        repeat,
    )
