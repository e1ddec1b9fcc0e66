"""The line-by-line players in headless Chromium, checked against the program as it runs here.

Each page's snippets are run again in this process, in page order, to know what every traced
line holds; the players are then stepped through with clicks and with the keyboard, measured at
1280 and 390 px, reopened from a link, reached through Material's instant navigation, and
checked with axe-core in light and dark.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import torch
from playwright.sync_api import Browser, Locator, Page, Route
from playwright.sync_api import Error as PlaywrightError

from autograd_traced.drawing.backward_pass import Watch
from autograd_traced.drawing.graph import format_value
from autograd_traced.drawing.player import TIMES, player_id
from autograd_traced.fences.grammar import executable_fences
from autograd_traced.running import fork_server
from autograd_traced.running.snippets import ExampleRun, Snippet, run_snippet
from tests.support.browser import Recorder, axe_audit, swap_in
from tests.support.paths import ARTICLES as PAGES_WITH_PROGRAMS

pytestmark = pytest.mark.browser

# The pages with at least one player (trace="on").
ARTICLES = [
    page
    for page in PAGES_WITH_PROGRAMS
    if any(fence.options.get("trace") == "on" for fence in executable_fences(page.read_text()))
]
WIDTHS = (1280, 390)
MIN_GRAPH_TEXT_PX = 11


@dataclass(frozen=True)
class Expected:
    """One traced line as this process executed it."""

    source: str
    output: str
    tensors: dict[str, list[str]]  # name -> the facts the player must show for it
    has_graph: bool  # some tensor the program holds has a grad_fn


def _facts(tensor: torch.Tensor) -> list[str]:
    grad = tensor.grad if tensor.is_leaf else None
    return [
        format_value(tensor),
        f"requires_grad={tensor.requires_grad}",
        f"is_leaf={tensor.is_leaf}",
        f".grad={'None' if grad is None else format_value(grad)}",
    ]


@cache
def expected_players(page: Path) -> dict[str, list[Expected]]:
    """The page's snippets run again, in a process of the page's own, as the build runs them."""
    recorded = fork_server.shared().call(record_players, page)  # plain data, as a page's is
    return {name: [Expected(**step) for step in steps] for name, steps in recorded.items()}


def record_players(page: Path, **_: object) -> dict[str, list[dict[str, Any]]]:
    """Run the page's snippets in order in a fresh namespace; record each traced line."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    players: dict[str, list[Expected]] = {}
    for fence in executable_fences(page.read_text()):
        if fence.language != "pycon":
            continue
        path = fence.options["file"]
        steps: list[Expected] = []

        def observe(run: ExampleRun, names: dict[str, Any], steps: list[Expected] = steps) -> None:
            tensors = {k: v for k, v in names.items() if isinstance(v, torch.Tensor)}
            steps.append(
                Expected(
                    run.source.rstrip("\n"),
                    run.output.rstrip(),
                    {name: _facts(value) for name, value in tensors.items()},
                    any(value.grad_fn is not None for value in tensors.values()),
                )
            )

        source = (page.parents[1] / path).read_text(encoding="utf-8")
        snippet = Snippet.parse(path, source, page=page.name)
        run_snippet(snippet, namespace, page=page.name, observe=observe)
        if fence.options.get("trace") == "on":
            players[player_id(path)] = steps
    return {name: [asdict(step) for step in steps] for name, steps in players.items()}


def _url(page: Path) -> str:
    return f"{page.stem}/"


CURRENT_STEP_JS = """
root => {
  const steps = [...root.querySelectorAll('.ag-tracer__steps > li')];
  const lines = [...root.querySelectorAll('.highlight code > .ag-tracer__line')];
  const current = lines.filter(line => line.getAttribute('aria-current') === 'step');
  const other = lines.find(line => !current.includes(line));
  const vars = {};
  for (const li of root.querySelectorAll('.ag-tracer__now .ag-tracer__var')) {
    vars[li.querySelector('.ag-tracer__name').textContent] = li.textContent;
  }
  const mark = line => line && getComputedStyle(line).borderLeftColor;
  const fig = root.querySelector('.ag-tracer__fig');
  const step = steps[lines.indexOf(current[0])];
  return {
    current: current.map(line => lines.indexOf(line) + 1),
    lines: lines.length,
    code: step ? step.querySelector('.ag-tracer__code').textContent : null,
    shown: current.length ? current[0].textContent : null,
    highlighted: current.length > 0 && mark(current[0]) !== mark(other),
    position: root.querySelector('.ag-tracer__position').textContent,
    vars,
    graphs: fig.querySelectorAll('svg').length,
    note: fig.querySelector('.ag-tracer__graph-note')?.textContent ?? null,
    announced: root.querySelector('[aria-live="polite"]').textContent,
  };
}
"""


def _console(source: str, output: str) -> str:
    """How the transcript shows one example: prompts before its lines, then what it printed."""
    lines = source.split("\n")
    shown = ">>> " + "\n... ".join(lines)
    return shown + ("\n" + output if output else "")


def check_step(player: Locator, steps: list[Expected], number: int) -> None:
    """The player shows line `number` as executed: code, position, state, output, graph."""
    pid = player.get_attribute("id")
    with suppress(PlaywrightError):  # a fragment change is handled after `hashchange`
        player.locator(f'#{pid}-line-{number}[aria-current="step"]').wait_for(timeout=2_000)
    shown: dict[str, Any] = player.evaluate(CURRENT_STEP_JS)
    step, where = steps[number - 1], f"{pid} line {number}"
    assert shown["lines"] == len(steps), f"{where}: the transcript has {shown['lines']} examples"
    assert shown["current"] == [number], f"{where}: aria-current on {shown['current']}"
    assert shown["highlighted"], f"{where}: the current line looks like the others"
    assert shown["code"] == step.source, where
    assert shown["position"] == f"line {number} of {len(steps)}", where
    if not step.output.startswith("Traceback"):  # the transcript abridges a traceback
        assert shown["shown"].rstrip("\n") == _console(step.source, step.output), where
    for name, facts in step.tensors.items():
        text = shown["vars"].get(name, "")
        assert all(fact in text.split() for fact in facts), f"{where}: {name} {facts} in {text!r}"
    if step.has_graph:
        assert shown["graphs"] == 1 and shown["note"].startswith("The graph "), where
    else:
        assert shown["graphs"] == 0 and shown["note"].startswith("No graph yet"), where


def players_on(page: Page) -> Iterator[tuple[Locator, list[Expected]]]:
    article = next(a for a in ARTICLES if page.url.split("#")[0].endswith(_url(a)))
    expected = expected_players(article)
    roots = page.locator(".ag-tracer.is-live")
    assert roots.count() == len(expected), "every traced snippet has a live player"
    for index in range(roots.count()):
        root = roots.nth(index)
        yield root, expected[root.get_attribute("id") or ""]


FOCUS_JS = """
() => {
  const element = document.activeElement, style = getComputedStyle(element);
  return {
    label: element.getAttribute('aria-label'),
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
  };
}
"""


@pytest.mark.parametrize("article", ARTICLES, ids=lambda p: p.stem)
def test_players_step_with_clicks_and_keys(
    site_url: str, recorder: Recorder, article: Path
) -> None:
    page = recorder.page
    page.goto(site_url + _url(article), wait_until="networkidle")
    for player, steps in players_on(page):
        count, pid = len(steps), player.get_attribute("id")
        button = {
            name: player.get_by_role("button", name=f"{name} line", exact=True)
            for name in ("First", "Previous", "Next", "Last")
        }
        button["Last"].click()
        check_step(player, steps, count)
        button["First"].click()
        for number in range(1, count + 1):
            check_step(player, steps, number)
            assert page.evaluate("location.hash") == f"#{pid}-line-{number}"
            if number < count:
                button["Next"].click()
        for name in ("Next", "Last"):
            assert button[name].is_disabled()  # and so no Tab stop
            button[name].dispatch_event("click")  # the player goes no further than the last line
            check_step(player, steps, count)
        # The live region says what a sighted reader sees: the line and what it printed.
        announced = player.evaluate(CURRENT_STEP_JS)["announced"]
        assert announced.startswith(f"Line {count} of {count}: {steps[-1].source}."), announced
        out = steps[-1].output
        raised = out.startswith("Traceback")
        said = f"It raised {out.splitlines()[-1]}" if raised else f"It printed: {out}."
        assert not out or said in announced, announced

        player.locator(".highlight code").focus()
        for number in range(count - 1, 0, -1):
            page.keyboard.press("ArrowLeft")
            check_step(player, steps, number)
        page.keyboard.press("End")
        check_step(player, steps, count)
        page.keyboard.press("Home")
        check_step(player, steps, 1)
        page.keyboard.press("ArrowRight")
        check_step(player, steps, min(2, count))

        button["First"].focus()
        page.keyboard.press("Tab")
        focus = page.evaluate(FOCUS_JS)
        assert focus["label"] == "Previous line" and focus["ring"], f"focus not visible: {focus}"
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_a_link_opens_its_step(site_url: str, recorder: Recorder) -> None:
    page = recorder.page
    page.goto(site_url + "computation-graphs/#trace-setup-line-8", wait_until="networkidle")
    player = page.locator("#trace-setup")
    check_step(player, expected_players(ARTICLES[0])["trace-setup"], 8)
    assert player.evaluate("root => root.getBoundingClientRect().top < innerHeight")
    note = player.locator(".ag-tracer__fig .ag-tracer__graph-note").text_content()
    assert note == "The graph after this line: new graph of z: AddBackward0, MulBackward0."

    # An in-page link: the player answers `hashchange` at once, then Material's instant
    # navigation loads the page afresh (no reload) and swaps the content in, a few hundred ms
    # later. Checked before the swap, the player could be detached mid-check: mark the content
    # shown now, and wait until it has been replaced.
    steps = expected_players(ARTICLES[0])["trace-second-call-fails"]
    freeing = len(steps) - 1  # the first request: it frees, and the next one raises
    failing = page.locator("#trace-second-call-fails")
    failing.evaluate("root => { root.dataset.before = 'swap'; }")
    page.evaluate(f"location.hash = '#trace-second-call-fails-line-{freeing}'")
    page.wait_for_function(
        "() => document.querySelector('#trace-second-call-fails:not([data-before])')?.dataset.live"
    )
    check_step(failing, steps, freeing)
    # The other player was swapped in afresh too, and kept its line.
    check_step(player, expected_players(ARTICLES[0])["trace-setup"], 8)
    note = failing.locator(".ag-tracer__fig .ag-tracer__graph-note").text_content() or ""
    assert note.startswith("The graph after this line: freed")
    failing.get_by_role("button", name="Next line", exact=True).click()
    check_step(failing, steps, len(steps))
    assert "It raised RuntimeError" in (failing.locator(".ag-tracer__now").text_content() or "")


def test_players_work_after_instant_navigation(site_url: str, recorder: Recorder) -> None:
    # The site is built for the address it is served at, so Material swaps pages in.
    page = recorder.page
    page.goto(site_url, wait_until="networkidle")
    page.evaluate("window.notReloaded = true")
    link = page.locator("article").get_by_role("link", name="Computing Gradients via Autograd")
    swap_in(page, link.click)
    assert page.url.endswith("/computing-gradients/")
    page.locator(".ag-tracer.is-live").first.wait_for()
    assert page.evaluate("window.notReloaded === true"), "the page was loaded, not swapped in"
    for player, steps in players_on(page):
        player.get_by_role("button", name="Last line", exact=True).click()
        check_step(player, steps, len(steps))
    assert not recorder.problems(), "\n".join(recorder.problems())


OVERFLOW_JS = """
root => {
  const box = root.getBoundingClientRect();
  const column = root.closest('.md-content__inner').getBoundingClientRect();
  const problems = [];
  if (box.left < column.left - 1 || box.right > column.right + 1) problems.push('player');
  for (const element of root.querySelectorAll('*')) {
    if (element.closest('.ag-tracer__announce') || !element.getClientRects().length) continue;
    const r = element.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1) {
      problems.push(`${element.tagName}.${element.className.baseVal ?? element.className}`);
    }
    if (element.scrollWidth > element.clientWidth + 1 && element.clientWidth > 0
        && getComputedStyle(element).overflowX !== 'visible') {
      problems.push(`scrolls: ${element.tagName}.${element.className}`);
    }
  }
  return problems;
}
"""

GRAPH_TEXT_JS = """
root => {
  const svg = root.querySelector('.ag-tracer__fig svg');
  if (!svg) return null;
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return Math.min(...[...svg.querySelectorAll('text')]
    .map(text => parseFloat(text.getAttribute('font-size')) * scale));
}
"""


@contextmanager
def opened(browser: Browser, width: int, scheme: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("article", ARTICLES, ids=lambda p: p.stem)
def test_no_horizontal_overflow_and_legible_graphs(
    site_url: str, browser: Browser, article: Path, width: int
) -> None:
    with opened(browser, width, "light") as page:
        page.goto(site_url + _url(article), wait_until="networkidle")
        smallest = []
        for player, steps in players_on(page):
            pid = player.get_attribute("id")
            for number in range(1, len(steps) + 1):
                if number > 1:
                    player.get_by_role("button", name="Next line", exact=True).click()
                check_step(player, steps, number)
                problems = player.evaluate(OVERFLOW_JS)
                if page.evaluate("document.documentElement.scrollWidth > innerWidth"):
                    problems.append("the page scrolls sideways")
                assert not problems, f"{pid} line {number} at {width}px: {problems}"
                size = player.evaluate(GRAPH_TEXT_JS)
                if size is not None:
                    smallest.append(size)
        assert smallest and min(smallest) >= MIN_GRAPH_TEXT_PX, (
            f"graph text {min(smallest):.1f}px at {width}px"
        )


def test_without_javascript_the_trace_is_a_list_of_steps(site_url: str, browser: Browser) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 900}, java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + "computation-graphs/")
    steps = expected_players(ARTICLES[0])["trace-setup"]
    items = page.locator("#trace-setup > ol > li")
    assert items.count() == len(steps)
    for index, step in enumerate(steps):
        assert items.nth(index).locator(".ag-tracer__code").text_content() == step.source
    assert items.nth(7).get_by_text("Changed: z.").is_visible()
    visible = items.nth(7).locator(".ag-tracer__var:visible .ag-tracer__name")
    assert visible.all_text_contents() == ["z"]  # each step lists what it changed
    assert not page.locator("#trace-setup").evaluate(OVERFLOW_JS)
    context.close()


def test_a_player_the_script_leaves_a_list_shows_its_steps(
    site_url: str, recorder: Recorder
) -> None:
    """With scripts on, a player's steps are hidden until it goes live; one whose transcript
    does not match its steps (here: a step added) stays a list, and the list shows."""
    page, url = recorder.page, site_url + "computation-graphs/"

    def add_a_step(route: Route) -> None:
        response = route.fetch()
        steps = '<ol class="ag-tracer__steps" data-search-exclude>'
        body = response.text().replace(steps, steps + "<li>an extra step</li>", 1)
        route.fulfill(response=response, body=body)

    page.route(url, add_a_step)
    page.goto(url, wait_until="networkidle")
    first, second = page.locator(".ag-tracer").nth(0), page.locator(".ag-tracer").nth(1)
    assert "is-live" in (second.get_attribute("class") or "")
    assert not second.locator(".ag-tracer__steps").is_visible()
    assert "is-live" not in (first.get_attribute("class") or "")
    assert first.locator(".ag-tracer__steps").is_visible()
    assert first.get_by_text("an extra step").is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_violation_in_the_players(
    site_url: str, browser: Browser, scheme: str
) -> None:
    with opened(browser, 1280, scheme) as page:
        for article in ARTICLES:
            for fragment in ("", "#trace-setup-line-12"):
                page.goto(site_url + _url(article) + fragment, wait_until="networkidle")
                expected = "slate" if scheme == "dark" else "default"
                assert page.evaluate("document.body.dataset.mdColorScheme") == expected
                results = axe_audit(page, context=".ag-tracer")
                serious = [
                    f"{v['id']} ({v['impact']}): {v['help']} at "
                    + ", ".join(str(node["target"]) for node in v["nodes"][:3])
                    for v in results["violations"]
                    if v["impact"] in ("serious", "critical")
                ]
                assert not serious, f"{article.stem}{fragment} ({scheme}):\n" + "\n".join(serious)


# What a reader must see after each step, without scrolling (issue 18): each part's selector in
# the player, and the current step's own parts (the line it printed at, what it changed).
ONE_SCREEN_VIEWS = ((1280, 900), (390, 844))
PARTS_JS = """
root => {
  const rect = element => {
    if (!element || !element.getClientRects().length) return null;
    const r = element.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
  };
  const step = root.querySelector('.ag-tracer__steps > li[aria-current="step"]');
  const line = root.querySelector('.ag-tracer__line[aria-current="step"]');
  const header = document.querySelector('.md-header').getBoundingClientRect().bottom;
  const changed = [...root.querySelectorAll('.ag-tracer__now > .ag-tracer__body .is-changed')];
  // Inside the code window, a part counts where the window shows it.
  const clip = (r, element) => {
    const window = element && element.closest('code').getBoundingClientRect();
    return r && window && (r.top < window.top - 1 || r.bottom > window.bottom + 1)
      ? {...r, top: -1e4} : r;
  };
  const source = line ? [...line.children].filter(n => !n.matches('.go, .ag-traceback')) : [];
  const boxes = source.map(element => element.getBoundingClientRect());
  const box = boxes.length ? {
    top: Math.min(...boxes.map(b => b.top)), bottom: Math.max(...boxes.map(b => b.bottom)),
    left: Math.min(...boxes.map(b => b.left)), right: Math.max(...boxes.map(b => b.right)),
  } : null;
  const printed = line ? [...line.querySelectorAll(':scope > :is(.go, .ag-traceback)')] : [];
  return {
    top: header,
    parts: {
      controls: rect(root.querySelector('.ag-tracer__bar')),
      'current line': clip(box && {top: box.top, bottom: box.bottom, left: box.left,
                                   right: box.right}, line),
      'what changed': changed.length ? changed.map(rect)
        : [rect(root.querySelector('.ag-tracer__now .ag-tracer__summary'))],
      'what it printed': printed.map(element => clip(rect(element), element)),
      graph: step && step.dataset.graph ? [rect(root.querySelector('.ag-tracer__fig svg'))] : [],
    },
  };
}
"""


def off_screen(player: Locator, width: int, height: int) -> list[str]:
    """The parts of the current step that are not wholly inside the viewport, below the header."""
    shown = player.evaluate(PARTS_JS)
    out = []
    for name, rects in shown["parts"].items():
        for rect in rects if isinstance(rects, list) else [rects]:
            if rect is None:
                out.append(f"{name}: not shown")
            elif (
                rect["top"] < shown["top"] - 1
                or rect["bottom"] > height + 1
                or rect["left"] < -1
                or rect["right"] > width + 1
            ):
                out.append(f"{name}: {rect['top']:.0f}-{rect['bottom']:.0f} px")
    return out


@pytest.mark.parametrize("size", ONE_SCREEN_VIEWS, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("article", ARTICLES, ids=lambda p: p.stem)
def test_one_screen(site_url: str, browser: Browser, article: Path, size: tuple[int, int]) -> None:
    """After each Next and Previous, without scrolling: the controls, the current line, what it
    changed, what it printed or raised and the graph are all in the viewport."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(site_url + _url(article), wait_until="networkidle")
    problems = []
    for player, steps in players_on(page):
        pid, count = player.get_attribute("id"), len(steps)
        player.evaluate("root => root.scrollIntoView({block: 'start'})")
        player.evaluate("root => root.tracerGo(0)")
        order = [*range(2, count + 1), *range(count - 1, 0, -1)]  # Next to the end, then back
        for number, previous in zip(order, [1, *order], strict=False):
            name = "Next line" if number > previous else "Previous line"
            player.get_by_role("button", name=name, exact=True).click()
            check_step(player, steps, number)
            problems += [f"{pid} line {number}: {p}" for p in off_screen(player, width, height)]
    context.close()
    assert not problems, f"{len(problems)} parts off screen at {width}x{height}:\n" + "\n".join(
        problems
    )


# The walk back (issue 19): a line that ran autograd's nodes opens into them, one per step.
def record_walks(page: Path, **_: object) -> dict[str, list[dict[str, Any]]]:
    """Each walk back of the page's traced lines, as autograd's own hooks report it here:
    `{player-id}-line-{n}` -> its node runs, in the order they ran."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    walks: dict[str, list[dict[str, Any]]] = {}
    for fence in executable_fences(page.read_text()):
        if fence.language != "pycon":
            continue
        path, watches = fence.options["file"], []

        def watch(names: dict[str, Any], watches: list[Watch] = watches) -> Watch:
            watches.append(Watch(names, None))
            return watches[-1]

        source = (page.parents[1] / path).read_text(encoding="utf-8")
        run_snippet(
            Snippet.parse(path, source, page=page.name), namespace, page=page.name, watch=watch
        )
        for number, watched in enumerate(watches, start=1):
            walk = watched.result(error="raised")
            if walk is not None and fence.options.get("trace") == "on":
                walks[f"{player_id(path)}-line-{number}"] = [asdict(run) for run in walk.runs]
    return walks


@cache
def expected_walks(page: Path) -> dict[str, list[dict[str, Any]]]:
    return fork_server.shared().call(record_walks, page)  # type: ignore[no-any-return]


WALK_JS = """
root => {
  const running = root.querySelector('.ag-tracer__fig :is(.is-running, .is-failed)');
  return {
    position: root.querySelector('.ag-tracer__position').textContent,
    node: root.dataset.node,
    running: running ? running.textContent : null,
    failed: running ? running.classList.contains('is-failed') : null,
    carrying: root.querySelectorAll('.ag-tracer__fig .is-carrying').length,
    onEdges: [...root.querySelectorAll('.ag-tracer__fig .is-carrying > .ag-tracer__edge-value')]
      .map(label => label.textContent),
    now: root.querySelector('.ag-tracer__now > .ag-tracer__body').textContent,
    announced: root.querySelector('[aria-live="polite"]').textContent,
  };
}
"""


def check_node(
    player: Locator, line: int, runs: list[dict[str, Any]], number: int, *, said: bool = True
) -> None:
    """The player shows node `number` of line `line`'s walk as autograd ran it (and, once a
    reader moved to it, says so in the live region)."""
    pid, run = player.get_attribute("id"), runs[number - 1]
    where = f"{pid} line {line} node {number}"
    with suppress(PlaywrightError):  # a fragment change is handled after `hashchange`
        player.locator(f'[data-node="{number}"]').page.wait_for_function(
            f"() => document.getElementById('{pid}').dataset.node === '{number}'", timeout=2_000
        )
    shown: dict[str, Any] = player.evaluate(WALK_JS)
    assert shown["position"] == f"line {line} · node {number} of {len(runs)}", where
    # The drawing marks this node: an op by its name, a leaf's AccumulateGrad by the leaf.
    label = f"{run['leaf']} = " if run["leaf"] else run["name"]
    assert shown["running"] and label in shown["running"], f"{where}: {shown['running']!r}"
    assert shown["failed"] == bool(run["error"]), where
    carried = [sent for sent in run["sent"] if sent["value"] is not None]
    assert shown["carrying"] == len(carried), where  # an edge per gradient sent
    on_edges = sorted(sent["value"] for sent in carried)  # each with its value on it
    assert sorted(shown["onEdges"]) == on_edges, f"{where}: {shown['onEdges']} on the edges"
    now = shown["now"]
    assert f"receives {run['received']}" in now or f"= {run['received']}." in now, where
    for sent in run["sent"]:
        if sent["value"] is None:
            assert f"to {sent['to']}: None" in now, f"{where}: {sent} in {now!r}"
            continue
        assert f"to {sent['to']}: " in now and f"= {sent['value']}" in now, f"{where}: {now!r}"
        if sent["factor"] != sent["factor_value"]:  # the chain rule, from the node's values
            factor = f"{TIMES} {sent['factor']} = {run['received']} {TIMES} {sent['factor_value']}"
            assert factor in now, f"{where}: {factor!r} in {now!r}"
    if run["leaf"]:  # the leaf's box shows the .grad it wrote
        assert f".grad = {run['grad_after']}" in shown["running"], f"{where}: in the graph"
    if run["error"]:
        assert "It stops here: RuntimeError: Trying to backward through the graph" in now
    if said:
        assert shown["announced"].startswith(f"Line {line}, Node {number} of {len(runs)}: ")
    assert player.page.evaluate("location.hash") == f"#{pid}-line-{line}-node-{number}", where


def test_a_walk_steps_node_by_node_as_autograd_ran_it(site_url: str, recorder: Recorder) -> None:
    page = recorder.page
    article = next(a for a in ARTICLES if a.stem == "computing-gradients")
    page.goto(site_url + _url(article), wait_until="networkidle")
    player = page.locator("#trace-phase2-backward")
    runs = expected_walks(article)["trace-phase2-backward-line-1"]
    assert [run["name"] for run in runs][:3] == [
        "BinaryCrossEntropyBackward0",
        "SigmoidBackward0",
        "AddBackward0",
    ]
    player.get_by_role("button", name=f"Walk back: {len(runs)} nodes ▶").click()
    check_node(player, 1, runs, 1)
    for number in range(2, 4):
        player.get_by_role("button", name="Next node", exact=True).click()
        check_node(player, 1, runs, number)
    page.keyboard.press("ArrowRight")  # focus stays on the controls: the keys step too
    check_node(player, 1, runs, 4)
    page.keyboard.press("End")
    check_node(player, 1, runs, len(runs))
    page.keyboard.press("ArrowLeft")
    check_node(player, 1, runs, len(runs) - 1)
    page.keyboard.press("Home")
    check_node(player, 1, runs, 1)
    page.keyboard.press("Escape")  # back to the line
    steps = expected_players(article)["trace-phase2-backward"]
    check_step(player, steps, 1)
    player.get_by_role("button", name=f"Walk back: {len(runs)} nodes ▶").click()
    player.get_by_role("button", name="Last node", exact=True).click()
    player.get_by_role("button", name="Next node", exact=True).click()  # past the last node
    check_step(player, steps, 2)
    assert not recorder.problems(), "\n".join(recorder.problems())


def test_a_link_opens_a_node_of_a_walk(site_url: str, recorder: Recorder) -> None:
    page = recorder.page
    article = ARTICLES[0]
    page.goto(
        site_url + _url(article) + "#trace-second-call-fails-line-5-node-1",
        wait_until="networkidle",
    )
    player = page.locator("#trace-second-call-fails")
    failing = expected_walks(article)["trace-second-call-fails-line-5"]
    assert len(failing) == 1 and failing[0]["error"]  # the loss's node reads its freed values
    check_node(player, 5, failing, 1, said=False)  # opened, not moved to
    assert player.evaluate("root => root.getBoundingClientRect().top < innerHeight")
    # grad(loss, b) walks only what b needs: the rest of the graph is marked as never run.
    # An in-page link: Material swaps the page in afresh (see test_a_link_opens_its_step).
    player.evaluate("root => { root.dataset.before = 'swap'; }")
    page.evaluate("location.hash = '#trace-second-call-fails-line-4-node-3'")
    page.wait_for_function(
        "() => document.querySelector('#trace-second-call-fails:not([data-before])')?.dataset.live"
    )
    needed = expected_walks(article)["trace-second-call-fails-line-4"]
    check_node(player, 4, needed, 3, said=False)
    skipped = player.locator(".ag-tracer__fig .is-skipped")
    assert skipped.count() == 3 and "w1 = " in " ".join(skipped.all_text_contents())
    assert not recorder.problems(), "\n".join(recorder.problems())


WALK_PARTS_JS = """
root => {
  const rect = element => {
    if (!element || !element.getClientRects().length) return null;
    const r = element.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
  };
  const line = root.querySelector('.ag-tracer__line[aria-current="step"]');
  const code = line.closest('code').getBoundingClientRect();
  const first = line.firstElementChild.getBoundingClientRect();
  return {
    top: document.querySelector('.md-header').getBoundingClientRect().bottom,
    parts: {
      controls: [rect(root.querySelector('.ag-tracer__bar'))],
      // The line's first row is where the code window shows the line.
      'current line': [first.top < code.top - 1 || first.bottom > code.bottom + 1
        ? {...rect(line.firstElementChild), top: -1e4} : rect(line.firstElementChild)],
      'the node': [rect(root.querySelector('.ag-tracer__now > .ag-tracer__body'))],
      graph: [rect(root.querySelector('.ag-tracer__fig svg'))],
      'node in the graph':
        [rect(root.querySelector('.ag-tracer__fig :is(.is-running, .is-failed)'))],
    },
    // A list item's bullet sits in its indent: an item flush with the panel puts it outside.
    flush: [...root.querySelectorAll('.ag-tracer__now .ag-tracer__node li')]
      .filter(li => li.getBoundingClientRect().left
        - root.querySelector('.ag-tracer__now').getBoundingClientRect().left < 8)
      .map(li => li.textContent.trim().slice(0, 40)),
    // A gradient's value on its edge stays clear of every node's box and outline.
    touching: [...root.querySelectorAll('.ag-tracer__fig .ag-tracer__edge-value')]
      .flatMap(label => {
        const a = label.getBoundingClientRect();
        const meets = b => a.right > b.left - 1 && a.left < b.right + 1
          && a.bottom > b.top - 1 && a.top < b.bottom + 1;
        return [...root.querySelectorAll('.ag-tracer__fig .node')]
          .filter(node => meets(node.getBoundingClientRect()))
          .map(node => `${label.textContent} on ${node.textContent.trim().slice(0, 30)}`);
      }),
  };
}
"""


@pytest.mark.parametrize("size", ONE_SCREEN_VIEWS, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("article", ARTICLES, ids=lambda p: p.stem)
def test_one_screen_in_a_walk(
    site_url: str, browser: Browser, article: Path, size: tuple[int, int]
) -> None:
    """At each node of each walk back, without scrolling: the controls, the line, what the node
    did and the graph with the node marked."""
    width, height = size
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.goto(site_url + _url(article), wait_until="networkidle")
    problems = []
    for anchor, runs in expected_walks(article).items():
        pid, line = anchor.rsplit("-line-", 1)
        player = page.locator(f"#{pid}")
        player.evaluate("root => root.scrollIntoView({block: 'start'})")
        player.evaluate(f"root => root.tracerGo({int(line) - 1}, {{node: 0}})")
        for number in range(1, len(runs) + 1):
            if number > 1:
                player.get_by_role("button", name="Next node", exact=True).click()
            check_node(player, int(line), runs, number)
            shown = player.evaluate(WALK_PARTS_JS)
            for name, rects in shown["parts"].items():
                for rect in rects:
                    if rect is None or (
                        rect["top"] < shown["top"] - 1
                        or rect["bottom"] > height + 1
                        or rect["left"] < -1
                        or rect["right"] > width + 1
                    ):
                        problems.append(f"{anchor} node {number}: {name}: {rect}")
            problems += [f"{anchor} node {number}: a bullet outside: {li}" for li in shown["flush"]]
            problems += [
                f"{anchor} node {number}: a value touches {on}" for on in shown["touching"]
            ]
    context.close()
    assert not problems, f"{len(problems)} parts off screen at {width}x{height}:\n" + "\n".join(
        problems
    )
