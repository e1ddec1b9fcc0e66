// Material puts each code block's copy button in a <nav>: one unnamed navigation landmark per
// block (axe's landmark-unique), which screen readers list beside the site's real ones. The
// button stays; its bar is no landmark. Material's document$ runs this after every page it
// swaps in, once its code blocks are mounted.
(() => {
  "use strict";

  const unmark = () => {
    for (const nav of document.querySelectorAll("nav.md-code__nav")) nav.setAttribute("role", "none");
  };
  if (typeof document$ !== "undefined") document$.subscribe(unmark);
  else unmark();
})();
