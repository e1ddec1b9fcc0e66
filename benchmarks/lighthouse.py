"""Lighthouse's mobile performance score of every page, served as `nox -s preview` serves it.

The site is built strictly for the address it is served at (instant navigation needs it),
under the published path, text gzipped as GitHub Pages sends it. Each round runs Lighthouse
once on every page, in nav order; the samples are `lighthouse_performance <page>`, 0-100.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.config import load_config

from autograd_traced.tools import lighthouse
from autograd_traced.tools.local_site import serving, strict_build_command, url_path
from benchmarks.harness import ROOT, BenchError, Samples, base_env, run
from benchmarks.scaled_site import read_config

SAMPLE = "lighthouse_performance"


def page_urls() -> list[str]:
    """Every page of the nav as a path under the site: "", "computation-graphs/", ..."""
    config = read_config(ROOT / "mkdocs.yml")
    pages = [page for entry in config["nav"] for page in entry.values()]
    return [url_path(page) for page in pages]


def measure_lighthouse(repeat: int, workdir: Path) -> Samples:
    if lighthouse.command() is None:
        raise BenchError("lighthouse not found: set LIGHTHOUSE (`nox -s bench` installs it)")
    site = workdir / "lighthouse-site"
    published = load_config(str(ROOT / "mkdocs.yml")).site_url or "/"  # its !ENV read
    prefix = urlsplit(published).path or "/"
    samples: Samples = {}
    with serving(site, prefix) as url:  # the address first: the build needs it
        run(strict_build_command(site), env={**base_env(), "SITE_URL": url})
        for _ in range(repeat):
            for page in page_urls():
                try:
                    score = lighthouse.audit(url + page).scores["performance"]
                except RuntimeError as error:
                    raise BenchError(str(error)) from None
                samples.setdefault(f"{SAMPLE} {page or 'home'}", []).append(score)
    return samples
