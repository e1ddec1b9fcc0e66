/*
 * The line-by-line player: turns each server-rendered trace (autograd_traced.player, an ordered
 * list of steps) into the code with the current line marked, controls, and one panel showing that
 * step's state, the output printed so far and the graph. The step lives in the URL fragment
 * (#trace-setup-line-8). Material's document$ runs it again after every instant navigation.
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
    const node = element("button", "ag-tracer__button", text);
    node.type = "button";
    node.dataset.go = go;
    node.setAttribute("aria-label", `${text} line`);
    for (const [arrow, place] of [
      [before, "prepend"],
      [after, "append"],
    ]) {
      if (!arrow) continue;
      const span = element("span", "", arrow);
      span.setAttribute("aria-hidden", "true");
      node[place](span);
    }
    return node;
  }

  function region(className, label) {
    const node = element("div", className);
    node.append(element("p", "ag-tracer__label", label));
    const body = element("div", "ag-tracer__body");
    node.append(body);
    return [node, body];
  }

  function setUp(root) {
    if (root.dataset.live) return;
    root.dataset.live = "on";
    root.classList.add("is-live");
    const list = root.querySelector(".ag-tracer__steps");
    const steps = [...list.children];
    const count = steps.length;

    const bar = element("div", "ag-tracer__bar");
    const first = button("first", "First", "« ");
    const previous = button("previous", "Previous", "◀ ");
    const next = button("next", "Next", "", " ▶");
    const last = button("last", "Last", "", " »");
    const position = element("p", "ag-tracer__position");
    bar.append(first, previous, position, next, last);
    const announce = element("p", "ag-tracer__announce");
    announce.setAttribute("aria-live", "polite");

    const panel = element("div", "ag-tracer__panel");
    const [now, nowBody] = region("ag-tracer__now", "After this line");
    const [printed, printedBody] = region("ag-tracer__out", "Printed so far");
    const [figure, figureBody] = region("ag-tracer__fig", "The autograd graph");
    panel.append(now, printed, figure);
    list.before(bar);
    list.after(panel, announce);
    list.tabIndex = 0;
    list.setAttribute(
      "aria-label",
      `The ${count} lines; arrow keys step through them`,
    );

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
      for (const list of lists) {
        for (const entry of list ? list.children : [])
          latest.set(entry.dataset.name, entry);
      }
      const vars = element("ul", "ag-tracer__vars");
      for (const entry of latest.values()) {
        if (entry.classList.contains("is-removed")) continue;
        const copy = entry.cloneNode(true);
        if (entry.closest(".ag-tracer__step") !== steps[current]) {
          copy.classList.remove("is-changed");
          copy.querySelector(".ag-tracer__tag")?.remove();
        }
        vars.append(copy);
      }
      return vars;
    }

    // Copies, not moves: a step may show a graph drawn in another player above it.
    const copy = (node) => (node ? [node.cloneNode(true)] : []);

    function go(index, { push = true } = {}) {
      const current = Math.max(0, Math.min(count - 1, index));
      steps.forEach((step, i) => {
        step.classList.toggle("is-current", i === current);
        if (i === current) step.setAttribute("aria-current", "step");
        else step.removeAttribute("aria-current");
      });
      const step = steps[current];
      nowBody.replaceChildren(
        step.querySelector(".ag-tracer__summary").cloneNode(true),
        state(current),
      );
      printedBody.replaceChildren(
        ...steps
          .slice(0, current + 1)
          .flatMap((done) => copy(done.querySelector(".ag-tracer__printed"))),
      );
      printed.hidden = !printedBody.children.length;
      const drawn =
        step.dataset.graph && document.getElementById(step.dataset.graph);
      figureBody.replaceChildren(
        ...copy(step.querySelector(".ag-tracer__graph-note")),
        ...copy(drawn && drawn.querySelector(".ag-tracer__graph")),
      );
      position.textContent = `line ${current + 1} of ${count}`;
      first.setAttribute("aria-disabled", current === 0);
      previous.setAttribute("aria-disabled", current === 0);
      next.setAttribute("aria-disabled", current === count - 1);
      last.setAttribute("aria-disabled", current === count - 1);
      root.dataset.current = current + 1;
      lines.set(place(root), current);
      if (!push) return;
      const summary = step.querySelector(".ag-tracer__summary").textContent;
      const code = step.querySelector(".ag-tracer__code").textContent;
      announce.textContent = `${summary} ${code}`;
      history.replaceState(history.state, "", `#${step.id}`);
    }
    root.tracerGo = go;

    const moves = {
      first: () => 0,
      previous: (i) => i - 1,
      next: (i) => i + 1,
      last: () => count - 1,
    };
    const current = () => Number(root.dataset.current) - 1;
    bar.addEventListener("click", (event) => {
      const target = event.target.closest("button");
      if (target) go(moves[target.dataset.go](current()));
    });
    list.addEventListener("click", (event) => {
      const step = event.target.closest(".ag-tracer__step");
      if (step && list.contains(step)) go(steps.indexOf(step));
    });
    const keys = {
      ArrowRight: "next",
      ArrowDown: "next",
      ArrowLeft: "previous",
      ArrowUp: "previous",
      Home: "first",
      End: "last",
    };
    root.addEventListener("keydown", (event) => {
      const move = keys[event.key];
      if (!move || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      go(moves[move](current()));
    });

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

  const start = () => document.querySelectorAll(".ag-tracer").forEach(setUp);
  if (typeof document$ !== "undefined") document$.subscribe(start);
  else start();
})();
