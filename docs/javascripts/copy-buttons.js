// Material puts each code block's copy button in a <nav>, added as the block comes into view
// (content.lazy): each one is made no landmark from the moment it is added, so a page's
// landmarks stay its own (axe: landmark-unique).
(() => {
  "use strict";

  new MutationObserver((records) => {
    for (const record of records)
      for (const node of record.addedNodes)
        if (node instanceof HTMLElement && node.matches("nav.md-code__nav"))
          node.setAttribute("role", "none");
  }).observe(document.body, { childList: true, subtree: true });
})();
