"""The build-time HTML touches of autograd_traced.page_html.reader_markup."""

from autograd_traced.page_html.reader_markup import (
    break_table_code_at_dots,
    mark_tracebacks,
    name_search_dialog,
)

PROMPT = '<span class="gp">&gt;&gt;&gt; </span>'
TRACEBACK = (
    '<span class="gt">Traceback (most recent call last):</span>\n'
    '<span class="gr">RuntimeError</span>: <span class="n">boom</span>'
)


def test_traceback_is_wrapped_up_to_the_end_of_the_block() -> None:
    block = f"<code>{PROMPT}f()\n{TRACEBACK}\n</code>"
    assert mark_tracebacks(block) == (
        f'<code>{PROMPT}f()\n<span class="ag-traceback">{TRACEBACK}</span>\n</code>'
    )


def test_traceback_ends_at_the_next_prompt() -> None:
    block = f"<code>{TRACEBACK}\n{PROMPT}g()\n</code>"
    assert mark_tracebacks(block) == (
        f'<code><span class="ag-traceback">{TRACEBACK}</span>\n{PROMPT}g()\n</code>'
    )


def test_code_in_tables_may_break_after_dots_only() -> None:
    page = (
        "<p><code>torch.autograd</code></p>"
        "<table><td><code>torch.autograd.grad(x)</code></td></table>"
    )
    assert break_table_code_at_dots(page) == (
        "<p><code>torch.autograd</code></p>"
        "<table><td><code>torch.<wbr>autograd.<wbr>grad(x)</code></td></table>"
    )


def test_search_dialog_gets_a_name() -> None:
    page = '<div class="md-search" data-md-component="search" role="dialog">'
    assert name_search_dialog(page, "Search") == (
        '<div class="md-search" data-md-component="search" role="dialog" aria-label="Search">'
    )


def test_code_in_table_headers_stays_whole() -> None:
    page = "<table><th><code>loss.backward()</code></th><td><code>a.b</code></td></table>"
    assert break_table_code_at_dots(page) == (
        "<table><th><code>loss.backward()</code></th><td><code>a.<wbr>b</code></td></table>"
    )
