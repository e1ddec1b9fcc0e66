"""What `drawing/svg.compact` leaves of a Graphviz drawing: the same picture, fewer bytes."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from autograd_traced.drawing import svg
from autograd_traced.drawing.svg import compact, figure, legible_width
from autograd_traced.running import processes
from tests.support.paths import ROOT


def test_a_curve_whose_control_points_are_its_ends_becomes_a_line() -> None:
    box = (  # a rounded box's top side, its corner, its left side, as Graphviz writes them
        '<path fill="none" d="M240.2,-363C240.2,-363 12,-363 12,-363 6,-363 0,-357 0,-351'
        ' 0,-351 0,-334 0,-334"/>'
    )
    assert compact(box) == '<path d="M240,-363H12C6,-363 0,-357 0,-351V-334"/>'
    slanted = '<path d="M0,0C0,0 3,4 3,4"/>'
    assert compact(slanted) == '<path d="M0,0L3,4"/>'


def test_a_real_curve_and_any_other_path_stay_as_they_are() -> None:
    curve = '<path d="M252,-326C291,-314 323,-292 323,-253"/>'
    assert compact(curve) == curve
    other = '<path d="M0,0C1,1 2,2 3,3 4,4Z"/>'  # not moves and whole curves only
    assert compact(other) == other


def test_default_fills_are_left_to_the_style_sheet() -> None:
    shapes = (
        '<ellipse fill="none" cx="1"/><polygon fill="currentColor" points="0,0 1,1"/>'
        '<polygon fill="none" points="0,0 1,1"/><path fill="red" d="M0,0"/>'
    )
    assert compact(shapes) == (  # diagrams.css: none for a shape, currentColor for an arrowhead
        '<ellipse cx="1"/><polygon points="0,0 1,1"/>'
        '<polygon fill="none" points="0,0 1,1"/><path fill="red" d="M0,0"/>'
    )
    css = (ROOT / "docs/stylesheets/diagrams.css").read_text()
    assert ".ag-diagram :where(path, ellipse):where(:not([fill])) {\n  fill: none;" in css
    assert ".ag-diagram :where(polygon):where(:not([fill])) {\n  fill: currentColor;" in css


def test_graphviz_dies_with_the_process_that_started_it() -> None:
    """A SIGKILL of the build skips dot's time limit: dot must not go on drawing alone."""
    dense = " ".join(f"n{a} -> n{b};" for a in range(60) for b in range(60) if a != b)
    script = "import sys; from autograd_traced.drawing.svg import dot_svg; dot_svg(sys.argv[1])"
    drawer = subprocess.Popen([sys.executable, "-c", script, f"digraph {{ {dense} }}"])
    deadline = time.monotonic() + 30
    while not (dots := processes.children_of(drawer.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dots, "dot never started"
    drawer.kill()
    drawer.wait()
    deadline = time.monotonic() + 10
    while (left := [pid for pid in dots if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, "dot outlived the process that started it"


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for whoever adopted it to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def test_a_figure_is_no_narrower_than_its_smallest_text_needs() -> None:
    """11 px text at the narrowest: 557 units wide with 11-unit text needs 557 px."""
    svg = (
        '<svg viewBox="0 0 557 443" style="width: 743px; max-width: 100%">'
        '<text font-size="13.00">loss</text><text font-size="11">saved</text></svg>'
    )
    assert legible_width(svg) == 557
    assert '<figure class="autograd-diagram" style="--ag-legible-width: 557px">' in figure(svg)
    big = svg.replace('font-size="11"', 'font-size="22"')  # legible at half its width
    assert legible_width(big) == math.ceil(557 * 11 / 13)
    tiny = svg.replace('font-size="11"', 'font-size="5"')  # never wider than it is drawn
    assert legible_width(tiny) == 743
    assert legible_width('<svg viewBox="0 0 10 10" style="width: 13px"></svg>') is None
    assert figure('<svg viewBox="0 0 10 10" style="width: 13px"></svg>').startswith(
        '<figure class="autograd-diagram">'
    )


def test_pages_that_ask_for_one_drawing_at_once_start_graphviz_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A build's pages run in parallel and draw the same graphs: the second ask waits for
    the first drawing instead of running Graphviz again beside it."""
    runs: list[str] = []

    def slow_dot(source: str, timeout: float) -> str:
        runs.append(source)
        time.sleep(0.3)
        return f"<svg>{source}</svg>"

    monkeypatch.setattr(svg, "_run_dot", slow_dot)
    source = f"digraph {{ asked_at_once_{time.monotonic_ns()} }}"
    with ThreadPoolExecutor(max_workers=3) as pool:
        drawn = list(pool.map(svg.dot_svg, [source] * 3))
    assert drawn == [f"<svg>{source}</svg>"] * 3
    assert runs == [source]
    assert svg.dot_svg(source) == drawn[0] and runs == [source]  # and kept


def test_a_drawing_that_failed_is_drawn_again_when_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[str] = []

    def failing_once(source: str, timeout: float) -> str:
        attempts.append(source)
        if len(attempts) == 1:
            raise RuntimeError("dot failed (exit 1)")
        return "<svg/>"

    monkeypatch.setattr(svg, "_run_dot", failing_once)
    source = f"digraph {{ fails_once_{time.monotonic_ns()} }}"
    with pytest.raises(RuntimeError, match="dot failed"):
        svg.dot_svg(source)
    assert svg.dot_svg(source) == "<svg/>"
    assert len(attempts) == 2
