"""Published snippets are copied into the site while the pages run, and MkDocs' own copy of
static files waits for them: every one is there when it returns, or it raises what failed."""

from __future__ import annotations

from pathlib import Path

import pytest
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

from autograd_traced.page_html.takeaways import AS_TEXT, publish_snippets


def _config(root: Path) -> MkDocsConfig:
    (root / "docs").mkdir()
    config = MkDocsConfig(config_file_path=str(root / "mkdocs.yml"))
    config.load_dict({"site_name": "t", "docs_dir": "docs", "site_dir": str(root / "site")})
    errors, _ = config.validate()
    assert not errors, errors
    config.plugins._current_plugin = "autograd-traced"  # as while its on_files runs
    return config


def test_every_snippet_is_in_the_site_once_mkdocs_copies_static_files(tmp_path: Path) -> None:
    config = _config(tmp_path)
    used = [f"snippets/part_{i}/s{i}.pycon" for i in range(40)]
    for uri in used:
        (tmp_path / uri).parent.mkdir(parents=True)
        (tmp_path / uri).write_text(f">>> {uri!r}\n")
    files = publish_snippets(Files([]), config, used, dirty=False)
    files.copy_static_files()
    for uri in used:
        assert (tmp_path / "site" / (uri + AS_TEXT)).read_text() == f">>> {uri!r}\n"


def test_a_snippet_that_cannot_be_copied_fails_mkdocs_copy(tmp_path: Path) -> None:
    config = _config(tmp_path)
    (tmp_path / "snippets").mkdir()
    (tmp_path / "snippets/there.pycon").write_text(">>> 1\n")
    files = publish_snippets(
        Files([]), config, ["snippets/there.pycon", "snippets/gone.pycon"], dirty=False
    )
    with pytest.raises(FileNotFoundError, match=r"gone\.pycon"):
        files.copy_static_files()
