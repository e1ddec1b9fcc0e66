"""A console block's section: the last heading before it in the prose, read once a page."""

from autograd_traced.fences.grammar import find_fences, headings, section_of

PAGE = """\
```pycon exec="on" file="snippets/first.pycon"
```

# Setup

```text
# not a heading: code
```

```pycon exec="on" file="snippets/second.pycon"
```

## Backward ##

    ```pycon exec="on" file="snippets/third.pycon"
    ```
"""


def test_each_fence_is_under_the_last_heading_of_the_prose_before_it() -> None:
    titles = headings(PAGE)
    assert [title for _, title in titles] == ["Setup", "Backward"]
    executable = [fence for fence in find_fences(PAGE) if fence.language == "pycon"]
    assert [section_of(titles, fence) for fence in executable] == ["", "Setup", "Backward"]
