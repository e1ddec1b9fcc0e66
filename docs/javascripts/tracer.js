/*
 * The line-by-line player: turns each server-rendered trace (autograd_traced.drawing.player: the
 * highlighted transcript and an ordered list of steps) into one screen per step: controls, the
 * transcript with the current line marked, what that line changed (every variable one click
 * away) and the graph. The step lives in the URL fragment (#trace-setup-line-8). Material's
 * document$ runs it again after every instant navigation.
 * A line's walk back (its nodes, after the steps) opens to the same controls: #...-line-4-node-2.
 */
(() => {
  "use strict";

  const STEP = /^(.+)-line-(\d+)(?:-node-(\d+))?$/;
  // Room beside a walk's graph for a gradient's value on an edge: "-1.0889" and its gap.
  const VALUE_ROOM = 64;
  // Each player's line, by page and player: Material's instant navigation swaps in a fresh
  // copy of the page when only the fragment changes, and the other players keep their line.
  const lines = new Map();
  const place = (root) => `${location.pathname}#${root.id}`;

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text) node.textContent = text;
    return node;
  }

  // Visible text is the start of the accessible name ("Next" of "Next line").
  function button(go, text, before, after) {
    const node = element("button", "ag-tracer__button");
    node.append(element("span", "ag-tracer__word", text));
    node.type = "button";
    node.dataset.go = go;
    node.dataset.word = text;
    node.setAttribute("aria-label", `${text} line`);
    for (const [arrow, where] of [
      [before, "prepend"],
      [after, "append"],
    ]) {
      if (!arrow) continue;
      const span = element("span", "", arrow);
      span.setAttribute("aria-hidden", "true");
      node[where](span);
    }
    return node;
  }

  // Each example of the transcript in a span of its own, from its `>>>` to the next one, so
  // the current one can be marked. Its text stays as it was (the copy button reads data-copy).
  function examples(code) {
    const groups = [];
    for (const node of [...code.childNodes]) {
      // A `>>>` prompt starts an example: its code, its `...` lines, what it printed.
      if (node.matches?.(".gp") && node.textContent.startsWith(">>>")) {
        const group = element("span", "ag-tracer__line");
        node.before(group);
        groups.push(group);
      }
      if (groups.length) groups.at(-1).append(node);
    }
    // Each keeps its last newline: the code's text stays the transcript.
    return groups;
  }

  function setUp(root) {
    if (root.dataset.live) return;
    const list = root.querySelector(".ag-tracer__steps");
    const steps = [...list.children];
    const count = steps.length;
    const code = root.querySelector(".highlight pre > code");
    const groups = code ? examples(code) : [];
    // Not this transcript's steps: stay a list (tracer.css shows it again).
    if (groups.length !== count) {
      root.classList.add("is-list");
      return;
    }
    const walks = new Map(
      [...root.querySelectorAll(".ag-tracer__walk")].map((section) => [
        Number(section.dataset.line) - 1,
        { section, nodes: [...section.querySelectorAll(".ag-tracer__node")] },
      ]),
    );
    root.dataset.live = "on";
    root.classList.add("is-live");

    const bar = element("div", "ag-tracer__bar");
    const first = button("first", "First", "« ");
    const previous = button("previous", "Previous", "◀ ");
    const next = button("next", "Next", "", " ▶");
    const last = button("last", "Last", "", " »");
    const position = element("p", "ag-tracer__position");
    bar.append(first, previous, position, next, last);
    const announce = element("p", "ag-tracer__announce");
    announce.setAttribute("aria-live", "polite");

    const now = element("div", "ag-tracer__now");
    const nowBody = element("div", "ag-tracer__body");
    const all = element("details", "ag-tracer__all");
    const allSummary = element("summary");
    const allBody = element("div");
    all.append(allSummary, allBody);
    // In and out of a walk; beside "All variables": a phone has no line to spare.
    const openWalk = element("button", "ag-tracer__open-walk");
    openWalk.type = "button";
    now.append(nowBody, openWalk, all);
    const figure = element("div", "ag-tracer__fig");
    const transcript = code.closest(".highlight");
    transcript.before(bar);
    transcript.after(now, figure);
    list.after(announce);
    // The code window scrolls and takes the arrow keys: a Tab stop, kept when Material sets
    // the block up as it comes into view (content.lazy) and drops tabindex where it sees no
    // overflow.
    const focusable = () => code.tabIndex === 0 || (code.tabIndex = 0);
    focusable();
    new MutationObserver(focusable).observe(code, { attributeFilter: ["tabindex"] });
    code.setAttribute("aria-label", `${count} lines; the arrow keys step through them`);

    // The state after a line: each name's latest entry, from the start or a step up to it.
    const start = root.querySelector(".ag-tracer__start .ag-tracer__vars");
    function state(current) {
      const latest = new Map();
      const lists = [
        start,
        ...steps
          .slice(0, current + 1)
          .map((step) => step.querySelector(".ag-tracer__vars")),
      ];
      for (const vars of lists) {
        for (const entry of vars ? vars.children : [])
          latest.set(entry.dataset.name, entry);
      }
      const used = element("ul", "ag-tracer__vars");
      const left = element("ul", "ag-tracer__vars");
      for (const entry of latest.values()) {
        if (entry.classList.contains("is-removed")) continue;
        const copy = entry.cloneNode(true);
        copy.classList.remove("is-changed");
        copy.querySelector(".ag-tracer__tag")?.remove();
        (entry.hasAttribute("data-leftover") ? left : used).append(copy);
      }
      const shown = [used];
      if (left.children.length) {
        // Names earlier snippets left and this one never uses: out of the way, not gone.
        const fold = element("details", "ag-tracer__leftovers");
        fold.append(
          element("summary", "", `${left.children.length} left by earlier snippets`),
          left,
        );
        shown.push(fold);
      }
      return [used.children.length, shown];
    }

    const drawingOf = (anchor) => {
      const drawn = anchor && document.getElementById(anchor);
      return drawn && drawn.querySelector(".ag-tracer__graph svg");
    };
    // The graph's column: as wide as the widest graph, at every step and node, and room beside
    // it for a gradient's value in a walk; the code gets the rest.
    const widest = (walks.size ? VALUE_ROOM : 0) + Math.max(
      0,
      ...[...steps, ...[...walks.values()].map((walk) => walk.section)].map((shown) => {
        const svg = drawingOf(shown.dataset.graph);
        return svg ? svg.viewBox.baseVal.width : 0;
      }),
    );
    root.style.setProperty("--ag-graph-width", `${widest}px`);

    // Copies, not moves: a step may show a graph drawn in another player above it.
    function graphOf(anchor) {
      const svg = drawingOf(anchor);
      if (!svg) return [];
      const copy = svg.cloneNode(true);
      // One unit a pixel at every step: the text keeps its size, its smallest at 11 px.
      copy.style.width = `${svg.viewBox.baseVal.width}px`;
      copy.style.maxWidth = "none";
      return [copy];
    }

    // Keep the current line in the code window, with a line of context above it when the
    // line and what it printed leave room for one. The first line of a window never scrolled
    // is in view already: no layout is read for it (one forced layout per player at load
    // was a phone's blocking time).
    let scrolled = false;
    code.addEventListener("scroll", () => { scrolled = true; }, { passive: true });
    function reveal(group) {
      if (group === groups[0] && !scrolled) return;
      const line = parseFloat(getComputedStyle(code).lineHeight) || 20;
      const box = group.getBoundingClientRect();
      const room = code.clientHeight - box.height >= 2 * line;
      code.scrollTop += box.top - code.getBoundingClientRect().top - (room ? line : 0);
    }

    const said = (node) => (node ? node.textContent.trim() : "");

    // The walk on the line's graph: the node running, the edges carrying its gradients, the
    // nodes done, those never run, and each .grad written so far.
    function walkedGraph(walk, at) {
      const [svg] = graphOf(walk.section.dataset.graph);
      const mark = (id, name) => id && svg?.querySelector(`.${id}`)?.classList.add(name);
      for (const id of walk.section.dataset.skipped.split(" ")) mark(id, "is-skipped");
      walk.nodes.forEach((item, i) => {
        if (i < at) mark(item.dataset.node, "is-done");
        const texts = i <= at && item.dataset.leaf ? svg?.querySelectorAll(`.${item.dataset.node} text`) : [];
        for (const text of texts)
          if (text.textContent.startsWith(".grad = ")) text.textContent = `.grad = ${item.dataset.grad}`;
      });
      const item = walk.nodes[at];
      mark(item.dataset.node, item.classList.contains("is-error") ? "is-failed" : "is-running");
      const values = JSON.parse(item.dataset.values);
      item.dataset.edges.split(" ").forEach((edge, k) => {
        mark(edge, "is-carrying");
        // The gradient it carries, written by its edge (placed once drawn: placeValues).
        const carrier = edge && svg?.querySelector(`.${edge}`);
        if (!carrier) return;
        const label = document.createElementNS(svg.namespaceURI, "text");
        label.setAttribute("class", "ag-tracer__edge-value");
        label.setAttribute("font-size", svg.querySelector("text")?.getAttribute("font-size") ?? 14);
        label.textContent = values[k];
        carrier.append(label);
      });
      return svg ? [svg] : [];
    }

    // Each value beside its arrowhead or on the middle of its edge, wherever it covers the
    // least of the nodes and stays in the figure, centred on that spot.
    function placeValues(svg) {
      // Each node's box, grown by its outline (the running node's is 3 units thick).
      const nodes = [...svg.querySelectorAll(".node")].map((node) => {
        const b = node.getBBox();
        return { x: b.x - 3, y: b.y - 3, width: b.width + 6, height: b.height + 6 };
      });
      // The drawing is translated by 4: its left edge is at -4. A value may go past its right
      // edge, within the figure: the drawing grows to hold it (below).
      const room = figure.clientWidth - 4;
      // Where the values end, in the drawing's units.
      let right = 0;
      for (const label of svg.querySelectorAll(".ag-tracer__edge-value")) {
        const head = label.parentNode.querySelector("polygon").getBBox();
        const path = label.parentNode.querySelector("path");
        const mid = path.getPointAtLength(path.getTotalLength() / 2);
        const [w, h] = [label.getComputedTextLength(), Number(label.getAttribute("font-size"))];
        const y = head.y + head.height / 2;
        // Past every node level with it, right or left: where nodes stand close (a phone's
        // narrow drawing), the spots beside the edge all touch one.
        const level = (at) => nodes.filter((b) => b.y < at + h / 2 && b.y + b.height > at - h / 2);
        const clear = (at) => [
          [Math.max(...level(at).map((b) => b.x + b.width), head.x + head.width) + 3, at],
          [Math.min(...level(at).map((b) => b.x), head.x) - 3 - w, at],
        ];
        const spots = [
          [head.x + head.width + 3, y],
          [head.x - 3 - w, y],
          [mid.x + 3, mid.y],
          [mid.x - 3 - w, mid.y],
          [mid.x - w / 2, mid.y],
          ...clear(y),
          ...clear(mid.y),
        ];
        const across = (a, b, c, d) => Math.max(0, Math.min(b, d) - Math.max(a, c));
        // Cut off by the figure's edge is worse than touching a node.
        const outside = (x) => Math.max(0, -4 - x) + Math.max(0, x + w - room);
        const covered = ([x, y]) =>
          4 * h * outside(x) +
          nodes.reduce(
            (sum, b) =>
              sum + across(x, x + w, b.x, b.x + b.width) * across(y - h / 2, y + h / 2, b.y, b.y + b.height),
            0,
          );
        const [x, at] = spots.reduce((best, spot) => (covered(spot) < covered(best) ? spot : best));
        label.setAttribute("x", x);
        label.setAttribute("y", at + h / 3);
        right = Math.max(right, x + w + 6);
      }
      const box = svg.viewBox.baseVal;
      if (right > box.width) {
        box.width = right;
        svg.style.width = `${right}px`;
      }
    }

    function go(index, { push = true, node = -1 } = {}) {
      const current = Math.max(0, Math.min(count - 1, index));
      const walk = walks.get(current);
      const at = walk ? Math.min(node, walk.nodes.length - 1) : -1;
      steps.forEach((step, i) => {
        for (const node of [step, groups[i]]) {
          node.classList.toggle("is-current", i === current);
          if (i === current) node.setAttribute("aria-current", "step");
          else node.removeAttribute("aria-current");
        }
      });
      const step = steps[current];
      const changed = step.querySelector(".ag-tracer__vars").cloneNode(true);
      const [total, shown] = state(current);
      allSummary.textContent = `All variables (${total})`;
      allBody.replaceChildren(...shown);
      const item = at >= 0 ? walk.nodes[at] : null;
      if (item) {
        const what = element("div", "ag-tracer__node");
        what.append(...[...item.children].map((child) => child.cloneNode(true)));
        nowBody.replaceChildren(what);
        const [before, held] = state(current - 1);
        allSummary.textContent = `All variables, before this line (${before})`;
        allBody.replaceChildren(...held);
        figure.replaceChildren(...walkedGraph(walk, at));
        const drawn = figure.querySelector("svg");
        if (drawn) placeValues(drawn);
      } else {
        nowBody.replaceChildren(
          step.querySelector(".ag-tracer__summary").cloneNode(true),
          changed,
        );
        figure.replaceChildren(
          step.querySelector(".ag-tracer__graph-note").cloneNode(true),
          ...graphOf(step.dataset.graph),
        );
      }
      openWalk.hidden = !walk;
      openWalk.dataset.go = item ? "line" : "walk";
      if (walk) {
        const size = walk.nodes.length;
        openWalk.textContent = item
          ? `◀ Back to line ${current + 1}`
          : `Walk back: ${size} node${size === 1 ? "" : "s"} ▶`;
      }
      for (const control of [first, previous, next, last])
        control.setAttribute("aria-label", `${control.dataset.word} ${item ? "node" : "line"}`);
      position.textContent = item
        ? `line ${current + 1} · node ${at + 1} of ${walk.nodes.length}`
        : `line ${current + 1} of ${count}`;
      const lastLine = current === count - 1;
      const ends = item
        ? [
            [first, at === 0],
            [previous, false],
            [next, lastLine && at === walk.nodes.length - 1],
            [last, at === walk.nodes.length - 1],
          ]
        : [
            [first, current === 0],
            [previous, current === 0],
            [next, lastLine],
            [last, lastLine],
          ];
      for (const [node, end] of ends) {
        // A disabled button is no Tab stop: focus moves to the one that goes the other way.
        if (end && document.activeElement === node)
          (node === first || node === previous ? next : previous).focus();
        node.disabled = end && count > 1;
      }
      root.dataset.current = current + 1;
      root.dataset.node = at + 1;
      lines.set(place(root), current);
      reveal(groups[current]);
      if (!push) return;
      if (item) {
        announce.textContent = `Line ${current + 1}, ${said(item).replace(/\s+/g, " ")}`;
        history.replaceState(history.state, "", `#${item.id}`);
        return;
      }
      // What a sighted reader sees: the line, what it changed, what it printed or raised.
      const values = [...changed.children].map((entry) =>
        entry.classList.contains("is-removed")
          ? `${entry.dataset.name} deleted`
          : `${entry.dataset.name} = ${said(entry.querySelector(".ag-tracer__value"))}`,
      );
      const printed = said(step.querySelector(".ag-tracer__printed .ag-tracer__text"));
      announce.textContent = [
        `Line ${current + 1} of ${count}: ${said(step.querySelector(".ag-tracer__code"))}.`,
        step.classList.contains("is-error")
          ? `It raised ${printed.split("\n").at(-1)}`
          : printed && `It printed: ${printed}.`,
        values.length ? `Changed: ${values.join("; ")}.` : "Nothing changed.",
      ]
        .filter(Boolean)
        .join(" ");
      history.replaceState(history.state, "", `#${step.id}`);
    }
    root.tracerGo = go;

    const current = () => Number(root.dataset.current) - 1;
    // On paper, where the program ends: the last line; then back to the reader's line or node.
    let beforePrint = null;
    root.tracerPrint = (printing) => {
      if (printing) {
        beforePrint = [current(), Number(root.dataset.node) - 1];
        go(count - 1, { push: false });
      } else if (beforePrint !== null) {
        go(beforePrint[0], { push: false, node: beforePrint[1] });
        beforePrint = null;
      }
    };

    // A move goes to [line, node]: node -1 is the line itself. In a walk the same controls step
    // through its nodes, and past its last to the next line.
    function move(name) {
      const i = current();
      const n = Number(root.dataset.node) - 1;
      const size = walks.get(i)?.nodes.length;
      const [index, node] = (
        n < 0
          ? { first: [0, -1], previous: [i - 1, -1], next: [i + 1, -1], last: [count - 1, -1] }
          : { first: [i, 0], previous: [i, n - 1], next: n + 1 < size ? [i, n + 1] : [i + 1, -1], last: [i, size - 1] }
      )[name] ?? (name === "walk" ? [i, 0] : [i, -1]);
      go(index, { node });
    }
    bar.addEventListener("click", (event) => {
      const target = event.target.closest("button");
      if (target && !target.disabled) move(target.dataset.go);
    });
    now.addEventListener("click", (event) => {
      const target = event.target.closest("button[data-go]");
      if (target) move(target.dataset.go);
    });
    code.addEventListener("click", (event) => {
      const group = event.target.closest(".ag-tracer__line");
      if (group && !getSelection().toString()) go(groups.indexOf(group));
    });
    // Left and right step; up and down still scroll the page.
    const keys = {
      ArrowRight: "next",
      ArrowLeft: "previous",
      Home: "first",
      End: "last",
      Escape: "line",
    };
    for (const target of [code, bar, now]) {
      target.addEventListener("keydown", (event) => {
        const name = keys[event.key];
        if (!name || event.altKey || event.ctrlKey || event.metaKey) return;
        // Escape leaves a walk only.
        if (name === "line" && root.dataset.node === "0") return;
        event.preventDefault();
        move(name);
      });
    }

    const match = location.hash.slice(1).match(STEP);
    const opened = match && match[1] === root.id;
    const kept = lines.get(place(root)) ?? 0;
    go(opened ? Number(match[2]) - 1 : kept, {
      push: false,
      node: opened && match[3] ? Number(match[3]) - 1 : -1,
    });
    if (opened) root.scrollIntoView();
  }

  // A link to a step on the same page changes only the fragment.
  window.addEventListener("hashchange", () => {
    const match = location.hash.slice(1).match(STEP);
    const root = match && document.getElementById(match[1]);
    if (root && root.tracerGo) {
      root.tracerGo(Number(match[2]) - 1, { node: match[3] ? Number(match[3]) - 1 : -1 });
      root.scrollIntoView();
    }
  });

  for (const [event, printing] of [
    ["beforeprint", true],
    ["afterprint", false],
  ]) {
    window.addEventListener(event, () => {
      for (const root of document.querySelectorAll(".ag-tracer.is-live"))
        root.tracerPrint(printing);
    });
  }

  const start = () => document.querySelectorAll(".ag-tracer").forEach(setUp);
  if (typeof document$ !== "undefined") document$.subscribe(start);
  else start();
})();
