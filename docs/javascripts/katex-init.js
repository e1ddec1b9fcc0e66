// Render the math that pymdownx.arithmatex (generic: true) leaves in the page:
//   <span class="arithmatex">\( ... \)</span>   inline
//   <div class="arithmatex">\[ ... \]</div>     display (also \begin{env}...)
// with the vendored KaTeX (docs/assets/katex/, see scripts/vendor_katex.sh).
//
// This is the snippet from Material for MkDocs' math docs, with one change:
// it renders only inside the .arithmatex elements, with only arithmatex's
// \( \) and \[ \] delimiters, instead of scanning the whole body for $...$.
// arithmatex has already turned every $...$ / $$...$$ in the Markdown into
// those elements, so nothing is lost, and a literal dollar in prose (written
// \$ in Markdown, e.g. "\$5 or \$10") is not mistaken for math.
//
// document$ is Material's observable of the current document: it emits on
// the first load and after every instant-navigation page swap.
//
// Parse errors are not swallowed: KaTeX's throwOnError (default true) makes
// auto-render call its default errorCallback, console.error, and leave the
// source text in place, so a broken formula shows up in the browser console.
document$.subscribe(({ body }) => {
  for (const element of body.querySelectorAll(".arithmatex")) {
    renderMathInElement(element, {
      delimiters: [
        { left: "\\(", right: "\\)", display: false },
        { left: "\\[", right: "\\]", display: true }
      ]
    })
  }
})
