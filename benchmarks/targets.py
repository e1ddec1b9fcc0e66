"""From samples to medians, derived costs, ratios, and PASS/FAIL verdicts on the targets."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from benchmarks.harness import Samples
from benchmarks.lighthouse import SAMPLE
from benchmarks.memory import TreeMemory

MIB = 2**20
EXECUTION_COST_MAX = 1.10  # x import_torch: build with execution on minus off, the real site
SCALE_COST_MAX = 1.50  # x import_torch: the scaled build minus its plain Material build
SERVE_RELOAD_MAX = 2.0  # x the same snippet edit's reload on the real site
MEMORY_GROWTH_MAX = 20 * MIB  # over the serve rebuilds of the scaled site
FULL_SUITE_MAX = 2.0  # x build_on
WARM_BUILD_MAX = 1.10  # x plain Material: nothing changed, the results cache full
WARM_EDIT_COST_MAX = 0.50  # x import_torch: one snippet edited, over plain Material
LIGHTHOUSE_PERFORMANCE_MIN = 90  # the median of each page's mobile performance score

# derived name: (minuend, subtrahend), both medians
DIFFERENCES = {
    "import_torch": ("import_torch_gross", "python_startup"),
    "import_torch_optimizer": ("import_torch_optimizer_gross", "python_startup"),
    "execution_cost": ("build_on", "build_off"),
    "scale_cost": ("scale_build_on", "scale_build_plain"),
    "warm_edit_cost": ("warm_build_edit", "warm_build_plain"),
}
RATIOS = {
    "execution_cost / import_torch": ("execution_cost", "import_torch"),
    # Not a target: the site's lab trains with an optimizer, whose first call imports
    # torch._dynamo in the page's process, after torch: the floor of execution_cost.
    "execution_cost / import_torch_optimizer": ("execution_cost", "import_torch_optimizer"),
    "scale_cost / import_torch": ("scale_cost", "import_torch"),
    "serve_reload_scaled / serve_reload_site": ("serve_reload_scaled", "serve_reload_site"),
    "build_on / build_off": ("build_on", "build_off"),
    "scale_build_on / scale_build_plain": ("scale_build_on", "scale_build_plain"),
    "cores used, build_on (cpu / wall)": ("build_on_cpu", "build_on"),
    "cores used, scale_build_on (cpu / wall)": ("scale_build_on_cpu", "scale_build_on"),
    "warm_build / warm_build_plain": ("warm_build", "warm_build_plain"),
    "warm_edit_cost / import_torch": ("warm_edit_cost", "import_torch"),
    "full_suite / build_on": ("full_suite", "build_on"),
    "snippet_suite / build_on": ("snippet_suite", "build_on"),
}


@dataclass(frozen=True)
class Target:
    name: str
    passed: bool | None  # None: not measured in this run
    detail: str

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "SKIP"}[self.passed]


def medians(samples: Samples) -> dict[str, float]:
    """The median of every sample list, then each derived difference whose sides exist."""
    meds = {name: statistics.median(values) for name, values in samples.items() if values}
    for name, (minuend, subtrahend) in DIFFERENCES.items():
        if minuend in meds and subtrahend in meds:
            meds[name] = meds[minuend] - meds[subtrahend]
    return meds


def ratios(meds: dict[str, float]) -> dict[str, float]:
    return {
        label: meds[top] / meds[bottom]
        for label, (top, bottom) in RATIOS.items()
        if top in meds and bottom in meds and meds[bottom] > 0
    }


def memory_growth(memory: list[TreeMemory]) -> int | None:
    """PSS after the last rebuild minus before the first; None without two samples."""
    return memory[-1].pss_bytes - memory[0].pss_bytes if len(memory) > 1 else None


def at_most(name: str, value: str, limit_of: str, factor: float, meds: dict[str, float]) -> Target:
    """`value <= factor x limit_of`, from the medians; SKIP when either was not measured."""
    if value not in meds or limit_of not in meds:
        return Target(name, None, "not measured")
    limit = factor * meds[limit_of]
    return Target(name, meds[value] <= limit, f"{meds[value]:.2f} s vs limit {limit:.2f} s")


def every_round(
    name: str,
    pairs: tuple[str, str],
    limit_of: str,
    factor: float,
    samples: Samples,
    meds: dict[str, float],
) -> Target:
    """`minuend - subtrahend <= factor x limit_of` in every round, each round's two sides
    paired (they ran one after the other): one slow round fails it, where a median would hide
    it. `limit_of` is one of `meds`; SKIP when a side or the unit was not measured."""
    minuend, subtrahend = (samples.get(side, []) for side in pairs)
    if not minuend or not subtrahend or limit_of not in meds:
        return Target(name, None, "not measured")
    unit = meds[limit_of]
    costs = [on - off for on, off in zip(minuend, subtrahend, strict=True)]
    shown = ", ".join(f"{cost / unit:.2f}" for cost in costs)
    detail = (
        f"each round {shown} x {limit_of} ({unit:.2f} s), limit {factor:.2f}; "
        f"median {statistics.median(costs):.2f} s"
    )
    return Target(name, all(cost <= factor * unit for cost in costs), detail)


def memory_target(memory: list[TreeMemory], pages: int) -> Target:
    name = (
        f"serve memory grows <= {MEMORY_GROWTH_MAX / MIB:.0f} MiB over "
        f"{max(len(memory) - 1, 0) or 'the'} rebuilds at {pages + 1} pages (PSS, children included)"
    )
    growth = memory_growth(memory)
    if growth is None:
        return Target(name, None, "not measured")
    first, last = memory[0], memory[-1]
    detail = (
        f"{first.pss_bytes / MIB:.0f} -> {last.pss_bytes / MIB:.0f} MiB ({growth / MIB:+.1f}); "
        f"RSS summed {first.rss_bytes / MIB:.0f} -> {last.rss_bytes / MIB:.0f} MiB "
        f"over {last.processes} processes"
    )
    return Target(name, growth <= MEMORY_GROWTH_MAX, detail)


def lighthouse_target(meds: dict[str, float]) -> Target:
    name = f"Lighthouse mobile performance >= {LIGHTHOUSE_PERFORMANCE_MIN} on every page"
    scores = {key.split(" ", 1)[1]: value for key, value in meds.items() if key.startswith(SAMPLE)}
    if not scores:
        return Target(name, None, "not measured")
    detail = ", ".join(f"{page} {score:g}" for page, score in scores.items())
    return Target(name, min(scores.values()) >= LIGHTHOUSE_PERFORMANCE_MIN, detail)


def targets(samples: Samples, memory: list[TreeMemory], pages: int) -> list[Target]:
    """The targets, in the order of benchmarks/README.md; `pages`: the scaled article pages."""
    meds = medians(samples)
    return [
        at_most(
            f"execution_cost <= {EXECUTION_COST_MAX:.2f} x import_torch, the real site",
            *("execution_cost", "import_torch", EXECUTION_COST_MAX, meds),
        ),
        every_round(
            f"scale_cost <= {SCALE_COST_MAX:.2f} x import_torch in every round, "
            f"{pages} article pages",
            *(DIFFERENCES["scale_cost"], "import_torch", SCALE_COST_MAX, samples, meds),
        ),
        at_most(
            f"serve reload at {pages + 1} pages <= {SERVE_RELOAD_MAX:g} x on the real site",
            *("serve_reload_scaled", "serve_reload_site", SERVE_RELOAD_MAX, meds),
        ),
        memory_target(memory, pages),
        at_most(
            f"full_suite <= {FULL_SUITE_MAX:g} x build_on",
            *("full_suite", "build_on", FULL_SUITE_MAX, meds),
        ),
        at_most(
            f"warm build, nothing changed, <= {WARM_BUILD_MAX:.2f} x plain Material, "
            f"{pages} article pages",
            *("warm_build", "warm_build_plain", WARM_BUILD_MAX, meds),
        ),
        at_most(
            f"warm build after one snippet edit <= plain Material + "
            f"{WARM_EDIT_COST_MAX:.2f} x import_torch, {pages} article pages",
            *("warm_edit_cost", "import_torch", WARM_EDIT_COST_MAX, meds),
        ),
        lighthouse_target(meds),
    ]
