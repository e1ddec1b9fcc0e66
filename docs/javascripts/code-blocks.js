// Each line of code in a span, which reading.css indents after its first line (in the HTML,
// the spans would weigh 9 KB on the lab); Material's copy-button <nav>s made no landmarks.
(() => {
  "use strict";

  function wrapLine(prompt) {
    const line = document.createElement("span");
    line.className = "ag-code-line";
    prompt.before(line);
    for (let node = prompt; node; ) {
      const next = node.nextSibling;
      const end = node.nodeType === Node.TEXT_NODE ? node.data.indexOf("\n") : -1;
      if (end >= 0 && end < node.data.length - 1) node.splitText(end + 1);
      line.append(node);
      if (end >= 0) return;
      node = next;
    }
  }

  function wrapLines(code) {
    if (!code.querySelector(":scope > .ag-code-line"))
      code.querySelectorAll(":scope > .gp").forEach(wrapLine);
  }

  // A phone is several times slower than a desktop: the lab's 40 blocks at once were one long
  // task that froze the page. The players' code now (tracer.js reads its lines), the rest in
  // short slices, top first.
  let page = 0;
  function mend() {
    const blocks = [...document.querySelectorAll(".highlight pre > code")];
    blocks.filter((code) => code.closest(".ag-tracer")).forEach(wrapLines);
    for (const nav of document.querySelectorAll("nav.md-code__nav"))
      nav.setAttribute("role", "none");
    const current = ++page;
    let next = 0;
    (function slice() {
      const end = performance.now() + 8;
      while (current === page && next < blocks.length && performance.now() < end)
        wrapLines(blocks[next++]);
      if (current === page && next < blocks.length) setTimeout(slice);
    })();
  }
  if (typeof document$ !== "undefined") document$.subscribe(mend);
  else mend();
})();
