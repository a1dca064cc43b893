"""The console crosses threads one way: only `gwdesk.ui.tasks` starts a task, hands work to
a thread or posts to the loop from one (issue 20). An AST walk, not a text search: a
comment or a docstring naming a call does not count, a call by any spelling does."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import gwdesk.ui

UI: Final = Path(gwdesk.ui.__file__).parent
HANDOFF_MODULE: Final = UI / "tasks.py"
HANDOFFS: Final = frozenset(
    {
        "to_thread",
        "call_soon_threadsafe",
        "ensure_future",
        "create_task",
        "run_in_executor",
        "run_coroutine_threadsafe",
    }
)


def handoffs(source: str) -> list[tuple[int, str]]:
    """(line, name) of every call of a hand-off in `source`, in line order:
    `asyncio.to_thread(...)`, `loop.call_soon_threadsafe(...)`, `to_thread(...)` imported
    bare or under another name, and so on."""
    tree = ast.parse(source)
    renamed = {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name in HANDOFFS
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr in HANDOFFS:
            found.append((node.lineno, function.attr))
        elif isinstance(function, ast.Name) and function.id in renamed:
            found.append((node.lineno, renamed[function.id]))
    return sorted(found)


def test_no_ui_module_but_the_hand_off_module_crosses_threads_itself() -> None:
    offenders = [
        f"{path.relative_to(UI.parent)}:{line}: {name}"
        for path in sorted(UI.rglob("*.py"))
        if path != HANDOFF_MODULE
        for line, name in handoffs(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "cross threads through gwdesk.ui.tasks:\n" + "\n".join(offenders)


def test_the_hand_off_module_is_where_the_console_crosses_threads() -> None:
    names = {name for _line, name in handoffs(HANDOFF_MODULE.read_text(encoding="utf-8"))}
    assert {"call_soon_threadsafe", "ensure_future", "run_in_executor"} <= names


def test_every_spelling_of_a_hand_off_call_is_found_and_a_mention_is_not() -> None:
    source = '''
"""asyncio.to_thread(work) in a docstring is no call."""
import asyncio
from asyncio import ensure_future as start, to_thread

# loop.call_soon_threadsafe(callback) in a comment is no call either
async def work(loop):
    await asyncio.to_thread(print)
    await to_thread(print)
    loop.call_soon_threadsafe(print)
    asyncio.get_running_loop().create_task(work(loop))
    text = "asyncio.ensure_future(x)"
    start(work(loop))
'''
    assert [name for _line, name in handoffs(source)] == [
        "to_thread",
        "to_thread",
        "call_soon_threadsafe",
        "create_task",
        "ensure_future",
    ]
