"""The plugin as mkdocs.yml configures it: MkDocs validates its options, keeps the one
instance across rebuilds, and the plugin rewrites the search index after the search plugin
whichever order they are listed in."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

from autograd_traced.plugin import PLUGIN_NAME, AutogradTracedPlugin, configured
from tests.support.build import build, copy_site_sources
from tests.support.paths import ROOT


def site_with(tmp_path: Path, options: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# A page\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nplugins:\n  - {PLUGIN_NAME}:\n{options}")
    return config


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("      timeot: 5\n", "option 'timeot': Unrecognised configuration name: timeot"),
        ("      timeout: soon\n", "option 'timeout': Expected type: "),
        ("      downloads: index.md\n", "option 'downloads': Expected a list of items"),
        ("      execute: perhaps\n", "option 'execute': Expected type: <class 'bool'>"),
    ],
)
def test_a_wrong_option_fails_with_mkdocs_own_message(
    tmp_path: Path, options: str, message: str
) -> None:
    config = site_with(tmp_path, options)
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    logging.getLogger("mkdocs").addHandler(handler)
    try:
        with pytest.raises(Abort):  # not strict: an unknown option is an error, not a warning
            load_config(str(config), strict=False)
    finally:
        logging.getLogger("mkdocs").removeHandler(handler)
    assert f"Plugin '{PLUGIN_NAME}' {message}" in log.getvalue()


@pytest.mark.parametrize("folder", ["../elsewhere", ".", "/tmp/autograd-traced-cache"])
def test_a_results_cache_outside_the_site_fails_the_build(tmp_path: Path, folder: str) -> None:
    # Outside the site's folder (or the folder itself), a page's process could write it.
    config = site_with(tmp_path, f"      cache_dir: {folder}\n")
    result = build(config.parent, tmp_path / "site")
    assert not result.ok
    assert f"cache_dir {folder!r} must be a folder inside" in result.log, result.log


def test_the_site_configures_it_and_mkdocs_keeps_one_instance() -> None:
    plugin = configured(ROOT / "mkdocs.yml")
    assert isinstance(plugin, AutogradTracedPlugin)
    assert plugin.config.timeout == 60 and plugin.config.execute is True
    assert plugin.config.downloads == [
        "computation-graphs.md",
        "computing-gradients.md",
        "pitfalls.md",
        "find-the-line.md",
    ]
    assert configured(ROOT / "mkdocs.yml") is plugin  # what serve rebuilds rely on


def test_listed_before_search_it_still_rewrites_the_index_after_it(tmp_path: Path) -> None:
    root = copy_site_sources(tmp_path / "repo")
    config = root / "mkdocs.yml"
    text = config.read_text(encoding="utf-8")
    start = text.index("plugins:\n  - search:\n") + len("plugins:\n")
    search = text[start : text.index("\n  # Runs every page", start) + 1]  # the entry, its options
    last_option = "cache_dir: !ENV [AUTOGRAD_TRACED_CACHE_DIR, .cache/autograd-traced]\n"
    assert "separator:" in search and last_option in text
    text = text.replace(search, "").replace(last_option, last_option + search)
    config.write_text(text, encoding="utf-8")
    assert load_config(str(config)).plugins.keys() == {PLUGIN_NAME, "material/search"}
    result = build(root, tmp_path / "site")
    assert result.ok, result.log
    index = json.loads((tmp_path / "site" / "search" / "search_index.json").read_text())
    texts = " ".join(entry["text"] for entry in index["docs"])
    assert "∂L/∂b" in texts and "\\frac" not in texts  # the plugin's readable math
