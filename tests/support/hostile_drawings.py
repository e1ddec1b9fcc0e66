"""Drawings a hostile contributor could make the build inline: shared by the unit test of
the escaping and the browser test that clicks them."""

from __future__ import annotations

import torch


class HostileValue(torch.Tensor):
    """A value whose text tries to close its DOT label and add a link to the drawing."""

    def item(self) -> str:  # type: ignore[override]
        return '0</B>> URL="javascript:alert(1)" label=<<B>x'


def hostile_graph() -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """A loss whose leaf is a HostileValue, and the names the graph labels it with."""
    b = torch.tensor(0.0).as_subclass(HostileValue).requires_grad_()  # a leaf of the subclass
    loss = (b * 2).sum()
    return loss, {"b": b, "loss": loss}


# A hand-made diagram with everything that runs or leads elsewhere in SVG.
HOSTILE_SVG = (
    '<svg onload="alert(1)"><script>alert(2)</script>'
    '<a xlink:href="javascript:alert(3)" href="javascript:alert(4)"><text>kept</text></a>'
    '<foreignObject><div onclick="alert(5)">x</div></foreignObject>'
    '<use href="https://example.org/x.svg#y"/><image href="x.png"/>'
    '<set attributeName="href" to="javascript:alert(6)"/></svg>'
)
