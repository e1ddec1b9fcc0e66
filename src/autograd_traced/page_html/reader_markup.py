"""Build-time touches to the rendered HTML that readers need and Material does not give.

- ``mark_tracebacks``: Pygments marks an expected error's lines as a traceback (``gt``, then
  the exception's tokens), not as output (``go``), so it would look like code. Wrapping them
  in one ``ag-traceback`` span lets docs/stylesheets/outputs.css tint them like every other
  line the snippet printed.
- ``break_table_code_at_dots``: a table cell on a phone is narrow; its code may break after a
  dot (``torch.autograd.<wbr>grad``) rather than inside a name, which reading.css forbids. Not
  in a header, whose names stay whole: its column grows to hold them.
- ``name_search_dialog``: Material's search overlay is a ``role="dialog"`` without a name.
"""

from __future__ import annotations

import re

from autograd_traced.page_html.consoles import TRACEBACK_RE

_TABLE = re.compile(r"<table>.*?</table>", flags=re.DOTALL)
# Body cells only: a header's code names stay whole (its column grows to hold them).
_CELL = re.compile(r"<td\b.*?</td>", flags=re.DOTALL)
_CODE = re.compile(r"<code>.*?</code>", flags=re.DOTALL)
_DOT_BEFORE_NAME = re.compile(r"\.(?=[A-Za-z_])")
_SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'


def mark_tracebacks(page_html: str) -> str:
    # The tint covers the traceback's lines, not an empty one after them.
    return TRACEBACK_RE.sub(lambda m: f'<span class="ag-traceback">{m.group(0)}</span>', page_html)


def break_table_code_at_dots(page_html: str) -> str:
    def in_code(code: re.Match[str]) -> str:
        return _DOT_BEFORE_NAME.sub(".<wbr>", code.group(0))

    def in_cell(cell: re.Match[str]) -> str:
        return _CODE.sub(in_code, cell.group(0))

    return _TABLE.sub(lambda table: _CELL.sub(in_cell, table.group(0)), page_html)


def name_search_dialog(page_html: str, name: str) -> str:
    return page_html.replace(_SEARCH_DIALOG, f'{_SEARCH_DIALOG[:-1]} aria-label="{name}">', 1)
