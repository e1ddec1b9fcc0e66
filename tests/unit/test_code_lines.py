"""Each line of code of a console block is a span from its prompt to its newline."""

import re

from autograd_traced.page_html.code_lines import wrap_code_lines

GP = '<span class="gp">&gt;&gt;&gt; </span>'
MORE = '<span class="gp">... </span>'
LINE = '<span class="ag-code-line">'


def test_a_line_runs_from_its_prompt_to_its_newline() -> None:
    code = (
        f'<pre><span></span><code>{GP}x <span class="o">=</span> <span class="mf">1</span>\n'
        f'{GP}<span class="k">for</span> i:\n{MORE}    print(i)\n\n'
        '<span class="go">0</span>\n</code></pre>'
    )
    assert wrap_code_lines(code) == (
        "<pre><span></span><code>"
        f'{LINE}{GP}x <span class="o">=</span> <span class="mf">1</span>\n</span>'
        f'{LINE}{GP}<span class="k">for</span> i:\n</span>'
        f"{LINE}{MORE}    print(i)\n</span>\n"
        '<span class="go">0</span>\n</code></pre>'
    )


def test_a_newline_inside_a_token_does_not_end_the_line() -> None:
    """A string over two lines is one token: the line ends at the next newline between tokens."""
    code = f'<code>{GP}s <span class="o">=</span> <span class="s2">"""a\nb"""</span>\n</code>'
    wrapped = wrap_code_lines(code)
    assert wrapped.count('class="ag-code-line"') == 1
    assert wrapped.endswith('<span class="s2">"""a\nb"""</span>\n</span></code>')


def test_the_last_line_without_a_newline_and_other_code_are_kept() -> None:
    assert wrap_code_lines(f"<code>{GP}x</code>") == (
        f'<code><span class="ag-code-line">{GP}x</span></code>'
    )
    inline = "<p><code>w1.grad</code> and <code>a &lt; b</code></p>"
    assert wrap_code_lines(inline) == inline


def test_the_text_is_unchanged() -> None:
    code = (
        f'<code>{GP}print(<span class="s2">"&lt;x&gt;"</span>)\n'
        '<span class="go">&lt;x&gt;</span>\n</code>'
    )
    wrapped = wrap_code_lines(code)
    assert wrapped != code
    assert re.sub("<[^>]*>", "", wrapped) == re.sub("<[^>]*>", "", code)
