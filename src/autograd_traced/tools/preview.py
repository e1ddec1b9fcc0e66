"""`nox -s preview`: the site as it is published, on 127.0.0.1, offline.

A static server (local_site.serving, no `mkdocs serve`) serves site/ under the same path as
the published address (/autograd-traced/), with the site's 404 page for missing paths. The
site is built strictly for the preview's own address first: Material's instant navigation
works only under the site_url the site was built for, so the one difference from the
published files is the host in canonical links and the sitemap.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.config import load_config

from autograd_traced.tools.local_site import HOST, PORT, serving, strict_build_command


def preview_address(site_url: str, port: int) -> str:
    """The site's address on 127.0.0.1:port, under the same path as `site_url`."""
    return f"http://{HOST}:{port}{urlsplit(site_url).path or '/'}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--site-dir", type=Path, default=Path("site"))
    args = parser.parse_args(argv)

    published = load_config("mkdocs.yml").site_url  # SITE_URL, when set, is honoured here
    address = preview_address(published or "/", args.port)
    print(f"Building {args.site_dir}/ for {address} (published at {published})", flush=True)
    env = {**os.environ, "SITE_URL": address, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(strict_build_command(args.site_dir), env=env, check=False)
    if built.returncode != 0:
        return built.returncode

    with serving(args.site_dir, urlsplit(address).path, args.port) as url:
        print(f"Serving {args.site_dir}/ as published at {url} (Ctrl+C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
