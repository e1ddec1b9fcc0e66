"""A page of fences converted as the build converts one: SuperFences writes placeholders,
then the page's run fills them in (`FenceShow.fill`)."""

import markdown

from autograd_traced.fences.grammar import Fence
from autograd_traced.fences.superfences import FenceShow, PageState
from autograd_traced.running.plan import FenceResult, PagePlan, PageRun, PlannedFence, Settings

EXTENSIONS = ["pymdownx.highlight", "pymdownx.superfences"]


def converted(fences: FenceShow, text: str, *results: FenceResult) -> tuple[str, PageState]:
    """`text` as docs/a.md, whose plan has a fence for each of `results`: its HTML with the
    placeholders, and the page's state."""
    config = {"pymdownx.superfences": {"custom_fences": fences.custom_fences()}}
    planned = tuple(
        PlannedFence(Fence(result.language, result.options, 1, 0, 0, ""), result.where)
        for result in results
    )
    fences.begin_build()
    state = fences.begin_page(PagePlan("/", "docs/a.md", planned, Settings()))
    return markdown.markdown(text, extensions=EXTENSIONS, extension_configs=config), state


def rendered(fences: FenceShow, text: str, *results: FenceResult) -> str:
    """`text` converted, its fences' `results` filled in."""
    html, state = converted(fences, text, *results)
    return fences.fill(state, html, PageRun(state.plan, results))
