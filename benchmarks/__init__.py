"""The benchmark of the site's build and serve: `python -m benchmarks` (or `nox -s bench`).

One module per measurement (imports, builds, scale, serve, suites), a small harness that runs
and interleaves commands, and the targets and report that turn samples into verdicts.
"""
