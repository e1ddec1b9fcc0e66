"""The verdict on a page, decided in the build's (or the test's) own process.

The page's process sends plain data: what each example printed or raised (`child`). Here it
is checked against the transcripts the plan read before anything ran, with this process's
own checker: a snippet that patches the checker, forges a report or stops early cannot make
its page, or any other, pass.
"""

from __future__ import annotations

from dataclasses import replace

from autograd_traced.fences.registry import KINDS
from autograd_traced.running.child import FenceReport
from autograd_traced.running.plan import FenceResult, PagePlan, PlannedFence
from autograd_traced.running.snippets import (
    Snippet,
    SnippetError,
    check_snippet,
    transcript,
)


class ReportError(Exception):
    """The page's process sent something that is not a report of its fences."""


def stateful(plan: PagePlan) -> list[PlannedFence]:
    return [planned for planned in plan.fences if KINDS[planned.fence.language].stateful]


def decide(plan: PagePlan, reports: object) -> list[FenceResult]:
    """Each stateful fence's result, from the page's reports (ReportError if malformed)."""
    fences = stateful(plan)
    if not isinstance(reports, list) or len(reports) != len(fences):
        raise ReportError(f"expected {len(fences)} fence reports, got {reports!r:.200}")
    results: list[FenceResult] = []
    failed = ""
    for planned, report in zip(fences, reports, strict=True):
        result = _decide_fence(planned, report, plan, failed)
        results.append(result)
        failed = failed or (planned.where if result.failed else "")
    return results


def _decide_fence(
    planned: PlannedFence, report: object, plan: PagePlan, failed: str
) -> FenceResult:
    fence = planned.fence
    result = FenceResult(planned.where, fence.language, fence.options)
    try:
        sent = FenceReport.from_json(report)
    except ValueError as problem:
        raise ReportError(str(problem)) from None
    html, error, skipped = sent.html, sent.error, sent.skipped
    if planned.problem:
        return replace(result, error=planned.problem)
    if failed:  # whatever the page says: a fence after a failure is never shown as passed
        return replace(result, skipped=f"not run: {failed} failed before it")
    if error:
        return replace(result, error=error)
    if skipped:
        return replace(result, error=f"{planned.where}: not run, and nothing failed before it")
    if fence.language != "pycon":
        return replace(result, html=html)
    path = fence.options["file"]
    try:
        snippet = Snippet.parse(path, planned.source, page=planned.where)
        runs = check_snippet(
            snippet, sent.executed, page=planned.where, update=plan.settings.update
        )
    except SnippetError as problem:
        return replace(result, error=str(problem))
    return replace(result, html=html, console=transcript(runs), title=path, runs=tuple(runs))


def crashed(plan: PagePlan, where: str, message: str) -> list[FenceResult]:
    """Results for a page whose process ended (or was stopped) while running `where`."""
    results = []
    for planned in stateful(plan):
        result = FenceResult(planned.where, planned.fence.language, planned.fence.options)
        if where.endswith(f"(used by {planned.where})") or where == planned.where:
            results.append(replace(result, error=f"{where}: {message}"))
        else:
            results.append(replace(result, skipped=f"not shown: {where} did not finish"))
    if not any(result.failed for result in results):  # it died between fences
        results[0] = replace(results[0], skipped="", error=f"{where}: {message}")
    return results
