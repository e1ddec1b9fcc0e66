/*
 * The line-by-line player: turns each server-rendered trace (autograd_traced.drawing.player: the
 * highlighted transcript and an ordered list of steps) into one screen per step: controls, the
 * transcript with the current line marked, what that line changed (every variable one click
 * away) and the graph. The step lives in the URL fragment (#trace-setup-line-8). Material's
 * document$ runs it again after every instant navigation.
 */
(() => {
  "use strict";

  const STEP = /^(.+)-line-(\d+)$/;
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
      // A line of code (code-blocks.js); `>>>` starts an example.
      const prompt =
        node.nodeType === Node.ELEMENT_NODE &&
        node.classList.contains("ag-code-line") &&
        node.textContent.startsWith(">>> ");
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
    now.append(nowBody, all);
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

    const drawingOf = (step) => {
      const drawn =
        step.dataset.graph && document.getElementById(step.dataset.graph);
      return drawn && drawn.querySelector(".ag-tracer__graph svg");
    };
    // The graph's column: as wide as the widest graph, at every step; the code gets the rest.
    const widest = Math.max(
      0,
      ...steps.map((step) => {
        const svg = drawingOf(step);
        return svg ? svg.viewBox.baseVal.width : 0;
      }),
    );
    root.style.setProperty("--ag-graph-width", `${widest}px`);

    // Copies, not moves: a step may show a graph drawn in another player above it.
    function graphOf(step) {
      const svg = drawingOf(step);
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

    function go(index, { push = true } = {}) {
      const current = Math.max(0, Math.min(count - 1, index));
      steps.forEach((step, i) => {
        for (const node of [step, groups[i]]) {
          node.classList.toggle("is-current", i === current);
          if (i === current) node.setAttribute("aria-current", "step");
          else node.removeAttribute("aria-current");
        }
      });
      const step = steps[current];
      const changed = step.querySelector(".ag-tracer__vars").cloneNode(true);
      nowBody.replaceChildren(
        step.querySelector(".ag-tracer__summary").cloneNode(true),
        changed,
      );
      const [total, shown] = state(current);
      allSummary.textContent = `All variables (${total})`;
      allBody.replaceChildren(...shown);
      figure.replaceChildren(
        step.querySelector(".ag-tracer__graph-note").cloneNode(true),
        ...graphOf(step),
      );
      position.textContent = `line ${current + 1} of ${count}`;
      const ends = [
        [first, current === 0],
        [previous, current === 0],
        [next, current === count - 1],
        [last, current === count - 1],
      ];
      for (const [node, end] of ends) {
        // A disabled button is no Tab stop: focus moves to the one that goes the other way.
        if (end && document.activeElement === node)
          (node === first || node === previous ? next : previous).focus();
        node.disabled = end && count > 1;
      }
      root.dataset.current = current + 1;
      lines.set(place(root), current);
      reveal(groups[current]);
      if (!push) return;
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

    // On paper, where the program ends: the last line; then back to the reader's line.
    let beforePrint = null;
    root.tracerPrint = (printing) => {
      if (printing) {
        beforePrint = current();
        go(count - 1, { push: false });
      } else if (beforePrint !== null) {
        go(beforePrint, { push: false });
        beforePrint = null;
      }
    };

    const moves = {
      first: () => 0,
      previous: (i) => i - 1,
      next: (i) => i + 1,
      last: () => count - 1,
    };
    const current = () => Number(root.dataset.current) - 1;
    bar.addEventListener("click", (event) => {
      const target = event.target.closest("button");
      if (target && !target.disabled) go(moves[target.dataset.go](current()));
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
    };
    for (const target of [code, bar]) {
      target.addEventListener("keydown", (event) => {
        const move = keys[event.key];
        if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
        event.preventDefault();
        go(moves[move](current()));
      });
    }

    const match = location.hash.slice(1).match(STEP);
    const opened = match && match[1] === root.id;
    const kept = lines.get(place(root)) ?? 0;
    go(opened ? Number(match[2]) - 1 : kept, { push: false });
    if (opened) root.scrollIntoView();
  }

  // A link to a step on the same page changes only the fragment.
  window.addEventListener("hashchange", () => {
    const match = location.hash.slice(1).match(STEP);
    const root = match && document.getElementById(match[1]);
    if (root && root.tracerGo) {
      root.tracerGo(Number(match[2]) - 1);
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
