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

  function mend() {
    for (const code of document.querySelectorAll(".highlight pre > code")) {
      if (!code.querySelector(":scope > .ag-code-line"))
        code.querySelectorAll(":scope > .gp").forEach(wrapLine);
    }
    for (const nav of document.querySelectorAll("nav.md-code__nav"))
      nav.setAttribute("role", "none");
  }
  if (typeof document$ !== "undefined") document$.subscribe(mend);
  else mend();
})();
