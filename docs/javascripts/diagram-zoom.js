// Diagrams shrink to fit the column, down to the width that keeps their text legible
// (diagrams.css); past it, a diagram scrolls sideways in its figure. A diagram cut that way,
// or drawn with text under READABLE_PX, gets an "Enlarge diagram" button that opens it at
// its natural size in a modal dialog, scrollable both ways. Escape or "Close" returns
// focus to the button. tests/browser/test_reading.py measures the text in both places.
(() => {
  const READABLE_PX = 11;

  const open = (svg, button) => {
    const dialog = document.createElement("dialog");
    dialog.className = "ag-zoom";
    dialog.setAttribute("aria-label", "Enlarged diagram");
    const close = document.createElement("button");
    close.type = "button";
    close.className = "ag-zoom__close";
    close.textContent = "Close";
    close.addEventListener("click", () => dialog.close());
    const view = document.createElement("div");
    view.className = "ag-zoom__view";
    view.tabIndex = 0; // scrollable: the keyboard must be able to reach it (arrow keys scroll)
    view.setAttribute("role", "group");
    view.setAttribute("aria-label", "Diagram at full size, scrollable");
    const copy = svg.cloneNode(true);
    copy.querySelectorAll("[id]").forEach((element) => element.removeAttribute("id"));
    copy.style.maxWidth = "none";
    view.append(copy);
    dialog.append(close, view);
    dialog.addEventListener("close", () => {
      dialog.remove();
      button.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
    view.scrollLeft = (view.scrollWidth - view.clientWidth) / 2; // the graph's root is centred
  };

  // A diagram's smallest font size, in the units of its viewBox (Graphviz writes each).
  const smallestFont = (svg) =>
    Math.min(...[...svg.querySelectorAll("text")].map((text) =>
      parseFloat(text.getAttribute("font-size")) || 14));

  let observers = [];
  const setUp = () => {
    observers.forEach((observer) => observer.disconnect()); // the previous page's diagrams
    const diagrams = [...document.querySelectorAll("article svg.ag-diagram")].map((svg) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "ag-zoom-open";
      button.textContent = "Enlarge diagram";
      button.hidden = true;
      button.addEventListener("click", () => open(svg, button));
      const figure = svg.closest("figure.autograd-diagram");
      (figure || svg).after(button); // not in what scrolls
      // A player out of sight is not laid out (tracer.css): measuring its drawings would lay
      // it out. They are measured once it comes near.
      const player = svg.closest(".ag-tracer");
      const units = svg.viewBox.baseVal.width;
      return { svg, figure, button, player, font: smallestFont(svg), units };
    });
    const near = new Set();
    // Shown only while a diagram is drawn too small or cut by its column (it scrolls sideways
    // in its figure: phones, narrow windows, zoomed in). A cut figure is a scrollable region,
    // which the keyboard must reach. Every diagram at hand is measured, then every one changed:
    // one layout for the page, not one per diagram (a phone felt each).
    const update = () => {
      const shown = diagrams.filter(({ player }) => !player || near.has(player));
      const measured = shown.map(({ svg, figure, font, units }) => {
        const width = svg.getBoundingClientRect().width;
        const cut = !!figure && figure.scrollWidth > figure.clientWidth + 1;
        const middle = figure ? (figure.scrollWidth - figure.clientWidth) / 2 : 0;
        return { width, cut, middle, small: (font * width) / units < READABLE_PX };
      });
      shown.forEach(({ figure, button }, i) => {
        const { width, cut, middle, small } = measured[i];
        if (cut) {
          figure.tabIndex = 0;
          figure.setAttribute("aria-label", "Diagram, scrolls sideways");
          if (!figure.scrollLeft) figure.scrollLeft = middle; // where a graph's root is
        } else if (figure) {
          figure.removeAttribute("tabindex");
          figure.removeAttribute("aria-label");
        }
        button.hidden = !(width > 0) || !(cut || small);
      });
    };
    const resized = new ResizeObserver(update);
    const approached = new IntersectionObserver(
      (entries) => {
        const known = near.size;
        entries.forEach(({ target, isIntersecting }) => isIntersecting && near.add(target));
        if (near.size > known) update(); // not as one leaves: it is not laid out again then
      },
      { rootMargin: "100% 0px" }, // a window's height ahead, before it is drawn
    );
    for (const { svg, figure, player } of diagrams) {
      resized.observe(svg);
      if (figure) resized.observe(figure); // past the legible width, only the figure shrinks
      if (player) approached.observe(player);
    }
    observers = [resized, approached];
  };

  // Material's instant navigation swaps pages without reloading: document$ emits per page.
  if (window.document$) window.document$.subscribe(setUp);
  else setUp();
})();
