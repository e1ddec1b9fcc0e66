"""What `import torch` costs a fresh Python: the unit the execution targets are written in.

Beside it, `import torch` and a first optimizer: an optimizer's first method call imports
torch._dynamo (about 800 modules), which a page that trains pays on top of torch's import.
"""

from __future__ import annotations

from benchmarks.harness import PYTHON, Samples, base_env, interleave, run_timed


def measure_imports(repeat: int) -> Samples:
    """`python -c pass`, `python -c "import torch"` and torch with a first optimizer,
    interleaved."""
    env = base_env()
    optimizer = [PYTHON, "-c", _FIRST_OPTIMIZER]
    return interleave(
        {
            "python_startup": lambda _: run_timed([PYTHON, "-c", "pass"], env=env).wall,
            "import_torch_gross": lambda _: run_timed([PYTHON, "-c", "import torch"], env=env).wall,
            "import_torch_optimizer_gross": lambda _: run_timed(optimizer, env=env).wall,
        },
        repeat,
    )


_FIRST_OPTIMIZER = "import torch; torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)"
