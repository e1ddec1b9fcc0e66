"""Memory of a process and all its descendants, read from /proc (Linux).

The engine forks children that share the parent's pages copy-on-write: summing their RSS counts
every shared page once per process, so the total is also given as PSS (each shared page split
between the processes sharing it), which adds up to what the tree really holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class TreeMemory:
    processes: int
    rss_bytes: int  # sum of each process's resident set
    pss_bytes: int  # sum of each process's proportional set: shared pages counted once


def descendants(pid: int, proc: Path = PROC) -> list[int]:
    """`pid` and every process below it, from the parent ids in /proc/*/stat."""
    children: dict[int, list[int]] = {}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            # The command name in parentheses may contain spaces; the parent id follows it.
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
        children.setdefault(ppid, []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        tree.append(current := todo.pop())
        todo += children.get(current, [])
    return tree


def smaps_rollup_kib(text: str) -> dict[str, int]:
    """{"Rss": kiB, "Pss": kiB, ...} from the text of /proc/PID/smaps_rollup."""
    fields = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if rest.strip().endswith(" kB"):
            fields[name] = int(rest.split()[0])
    return fields


def tree_memory(pid: int, proc: Path = PROC) -> TreeMemory:
    rss = pss = processes = 0
    for member in descendants(pid, proc):
        try:
            fields = smaps_rollup_kib((proc / str(member) / "smaps_rollup").read_text())
        except OSError:
            continue  # ended, or a kernel thread without memory
        processes += 1
        rss += fields.get("Rss", 0) * 1024
        pss += fields.get("Pss", 0) * 1024
    return TreeMemory(processes, rss, pss)
