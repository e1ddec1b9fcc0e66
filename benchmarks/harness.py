"""Run measured commands: one environment, wall time, interleaving, and loud failure."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# mkdocs.yml sets the plugin's `execute` option from it (false: the baseline without torch).
EXECUTE_VAR = "AUTOGRAD_TRACED_EXECUTE"
# ... and its `cache` option (off but where a warm build is measured: a cold build runs all).
CACHE_VAR = "AUTOGRAD_TRACED_CACHE"

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
COMMAND_TIMEOUT = 1800.0

Samples = dict[str, list[float]]


class BenchError(RuntimeError):
    """A measured command failed or timed out: its timing would be meaningless."""


def log(message: str) -> None:
    print(message, flush=True)


def base_env(*, execute: bool = True, cache: bool = False) -> dict[str, str]:
    """The environment of every measured command; execution on and the results cache off
    unless asked otherwise."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONUNBUFFERED": "1"}
    env.pop(EXECUTE_VAR, None)  # on is the default: never inherit a stray "0"
    if not execute:
        env[EXECUTE_VAR] = "false"
    env[CACHE_VAR] = "true" if cache else "false"
    return env


def run(argv: Sequence[str], *, env: dict[str, str], cwd: Path = ROOT) -> str:
    """Run one command; return its output (stdout and stderr). BenchError when it fails."""
    result = subprocess.run(
        list(argv),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    if result.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {result.returncode}:\n{result.stdout[-4000:]}")
    return result.stdout


@dataclass(frozen=True)
class Timed:
    wall: float  # seconds
    cpu: float  # user + system seconds of the command and every process it waited for
    output: str


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(argv: Sequence[str], *, env: dict[str, str], cwd: Path = ROOT) -> Timed:
    """Run one command (as `run`) and time it."""
    start, cpu_start = time.perf_counter(), children_cpu()
    output = run(argv, env=env, cwd=cwd)
    return Timed(time.perf_counter() - start, children_cpu() - cpu_start, output)


def interleave(commands: dict[str, Callable[[int], float]], repeat: int) -> Samples:
    """Run each command once per round, in turn (a, b, a, b, ...): drift hits every side alike."""
    samples: Samples = {name: [] for name in commands}
    for round_ in range(repeat):
        for name, command in commands.items():
            samples[name].append(command(round_))
            log(f"  {name} #{round_ + 1}: {samples[name][-1]:.2f} s")
    return samples
