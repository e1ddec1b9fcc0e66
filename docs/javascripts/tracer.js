/*
 * The line-by-line player: turns each server-rendered trace (autograd_traced.drawing.player: the
 * highlighted transcript and an ordered list of steps) into one screen per step: controls, the
 * transcript with the current line marked, what that line changed (every variable one click
 * away) and the graph. The step lives in the URL fragment (#trace-setup-line-8). Material's
 * document$ runs it again after every instant navigation.
 *
 * A line that ran autograd's walk back has its nodes listed after the steps (one item each, in
 * the order they ran): opened, the same controls step through them (#trace-x-line-4-node-2),
 * highlighting in the line's graph the node running and the edges it sends gradients along.
 */
(() => {
  "use strict";

  const STEP = /^(.+)-line-(\d+)(?:-node-(\d+))?$/;
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
      const prompt =
        node.nodeType === Node.ELEMENT_NODE &&
        node.classList.contains("gp") &&
        node.textContent === ">>> ";
      if (prompt) {
        const group = element("span", "ag-tracer__line");
        node.before(group);
        groups.push(group);
      }
      if (groups.length) groups.at(-1).append(node);
    }
    return groups; // each keeps its last newline: the code's text stays the transcript
  }

  function setUp(root) {
    if (root.dataset.live) return;
    const list = root.querySelector(".ag-tracer__steps");
    const steps = [...list.children];
    const count = steps.length;
    const code = root.querySelector(".highlight pre > code");
    const groups = code ? examples(code) : [];
    if (groups.length !== count) return; // not this transcript's steps: stay a list
    // Each walk back by its line's index: its section and its nodes, in the order they ran.
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
    // Opens a line's walk back, and leaves it; beside "All variables", as the screen has no
    // line to spare.
    const openWalk = element("button", "ag-tracer__walk-button ag-tracer__open-walk");
    openWalk.type = "button";
    openWalk.dataset.go = "walk";
    now.append(nowBody, openWalk, all);
    const figure = element("div", "ag-tracer__fig");
    const transcript = code.closest(".highlight");
    transcript.before(bar);
    transcript.after(now, figure);
    list.after(announce);
    code.tabIndex = 0;
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

    // Copies, not moves: a step may show a graph drawn in another player above it.
    function graphOf(anchor) {
      const drawn = anchor && document.getElementById(anchor);
      const svg = drawn && drawn.querySelector(".ag-tracer__graph svg");
      if (!svg) return [];
      const copy = svg.cloneNode(true);
      // One unit a pixel at every step: the text keeps its size, its smallest at 11 px.
      copy.style.width = `${svg.viewBox.baseVal.width}px`;
      copy.style.maxWidth = "none";
      return [copy];
    }

    // Keep the current line in the code window, with a line of context above it when the
    // line and what it printed leave room for one.
    function reveal(group) {
      const line = parseFloat(getComputedStyle(code).lineHeight) || 20;
      const box = group.getBoundingClientRect();
      const room = code.clientHeight - box.height >= 2 * line;
      code.scrollTop += box.top - code.getBoundingClientRect().top - (room ? line : 0);
    }

    const said = (node) => (node ? node.textContent.trim() : "");

    // The line's graph with the walk drawn on it: the node running now, the edges carrying
    // its gradients, the nodes done before it and those the call never ran.
    function walkedGraph(walk, at) {
      const [svg] = graphOf(walk.section.dataset.graph);
      if (!svg) return [];
      const mark = (id, name) =>
        id && svg.querySelector(`.ag-id-${id}`)?.classList.add(name);
      for (const id of walk.section.dataset.skipped.split(" ")) mark(id, "is-skipped");
      walk.nodes.forEach((item, i) => {
        if (i < at) mark(item.dataset.node, "is-done");
      });
      const item = walk.nodes[at];
      mark(item.dataset.node, item.classList.contains("is-error") ? "is-failed" : "is-running");
      for (const edge of item.dataset.edges.split(" ")) mark(edge, "is-carrying");
      return [svg];
    }

    // The program's state during a walk: as before the line, with each .grad an
    // AccumulateGrad node wrote so far.
    function walkState(current, walk, at) {
      const [, shown] = state(current - 1);
      for (const item of walk.nodes.slice(0, at + 1)) {
        const leaf = item.dataset.leaf;
        const entry =
          leaf &&
          shown
            .map((list) => list.querySelector(`[data-name="${CSS.escape(leaf)}"]`))
            .find(Boolean);
        const grad =
          entry &&
          [...entry.children].find((cell) => cell.textContent.startsWith(".grad="));
        if (!grad) continue;
        grad.textContent = `.grad=${item.dataset.grad}`;
        entry.classList.add("is-changed");
      }
      return shown;
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
        allSummary.textContent = `All variables, during the walk (${total})`;
        allBody.replaceChildren(...walkState(current, walk, at));
        const note = element(
          "p",
          "ag-tracer__graph-note ag-tracer__walk-note",
          `Node ${at + 1} of ${walk.nodes.length} runs (marked), sending along the marked edges.`,
        );
        figure.replaceChildren(note, ...walkedGraph(walk, at));
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
      // One button in and out of a walk.
      openWalk.hidden = !walk;
      openWalk.dataset.go = item ? "line" : "walk";
      if (walk) {
        const size = walk.nodes.length;
        openWalk.textContent = item
          ? `◀ Back to line ${current + 1}`
          : `Walk back: ${size} node${size === 1 ? "" : "s"} ▶`;
      }
      const unit = item ? "node" : "line";
      for (const control of [first, previous, next, last])
        control.setAttribute("aria-label", `${control.dataset.word} ${unit}`);
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

    // Each move as [line, node]; node -1 is the line itself, 0 and up a node of its walk.
    const moves = {
      first: () => [0, -1],
      previous: (i) => [i - 1, -1],
      next: (i) => [i + 1, -1],
      last: () => [count - 1, -1],
      walk: (i) => [i, 0],
      line: (i) => [i, -1],
    };
    // In a walk the same controls step through its nodes; past its last, to the next line.
    const walkMoves = {
      first: (i) => [i, 0],
      previous: (i, n) => [i, n - 1],
      next: (i, n, size) => (n + 1 < size ? [i, n + 1] : [i + 1, -1]),
      last: (i, _, size) => [i, size - 1],
      line: (i) => [i, -1],
    };
    const current = () => Number(root.dataset.current) - 1;
    function move(name) {
      const line = current();
      const at = Number(root.dataset.node) - 1;
      const walk = walks.get(line);
      const [index, node] =
        at >= 0 && walkMoves[name]
          ? walkMoves[name](line, at, walk.nodes.length)
          : moves[name](line);
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
        if (name === "line" && root.dataset.node === "0") return; // Escape leaves a walk only
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

  const start = () => document.querySelectorAll(".ag-tracer").forEach(setUp);
  if (typeof document$ !== "undefined") document$.subscribe(start);
  else start();
})();
