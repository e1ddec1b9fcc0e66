"""Build-time machinery for the Autograd, Traced site: run snippets, draw graphs, trace state."""
