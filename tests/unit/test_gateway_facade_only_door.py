"""The gateway's facade is the only door (issue 20): no module outside `gwdesk.gateway`
reaches past `GatewayService` to its REST client or its retrier (`service.rest.status`,
`gateway.retrier.sleep`). An AST walk, so a docstring naming them does not count."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import gwdesk

SRC: Final = Path(gwdesk.__file__).parent
INSIDE: Final = frozenset({"gateway", "sandbox"})
"""The gateway itself, and the sandbox (the other end of the wire, with its own `rest`)."""
PAST_THE_FACADE: Final = frozenset({"rest", "retrier"})


def reached_past(source: str) -> list[tuple[int, str]]:
    """(line, name) of every `x.rest` or `x.retrier` in `source` but `self.rest` (an
    object's own attribute of that name)."""
    return sorted(
        (node.lineno, node.attr)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and node.attr in PAST_THE_FACADE
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    )


def test_the_walk_finds_a_reach_past_the_facade_by_any_name() -> None:
    source = (
        "async def f(gateway, s):\n    await gateway.rest.status()\n    await s.retrier.sleep(1)\n"
    )
    assert reached_past(source) == [(2, "rest"), (3, "retrier")]


def test_no_module_outside_the_gateway_reaches_past_its_facade() -> None:
    found = {
        f"{path.relative_to(SRC)}:{line}": name
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] not in INSIDE
        for line, name in reached_past(path.read_text(encoding="utf-8"))
    }
    assert found == {}
