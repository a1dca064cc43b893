"""The path of one SMS from the Send tab's button to its request, traced as it runs.

The modules it is handed through are those on the call stack when the request leaves,
each asyncio task followed back to the code that started it (the lanes of the outbox
runner to the send, the send to the task runner and the tab's click). What the path
consults on the way and leaves (the checks of `app/sms.py`, the opt-out list, the
outbox's rows, the values of `send_values` and `questions`, the domain's rules) is not
on it. The opt-out list is read once, for the send, by its own task.

If this changes, `docs/architecture.md` changes with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.send.tab import SendTab
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.send_support import fill, send_and_wait, send_tab

PATH = (
    "gwdesk.ui.send.tab",  # the click: the form to the flow's check, the task started
    "gwdesk.ui.tasks",  # the tab's task, run on the loop
    "gwdesk.ui.send.tab",  # the task is the tab's own: it asks the flow and renders
    "gwdesk.app.single_send",  # the flow: filled, costed, asked, sent, what to refresh
    "gwdesk.app.sending",  # the opt-out list read once, recorded, run, history written
    "gwdesk.app.outbox",  # the runner: claimed, in flight, the request exactly once
    "gwdesk.gateway.service",  # the facade: the profile's retry policy for the runner's loop
    "gwdesk.gateway.retry",  # the one loop of tries: the first try, no wait
    "gwdesk.app.outbox",  # the try: one request, a lost answer settled by status
    "gwdesk.gateway.service",  # the facade's single attempt, the only door to REST
    "gwdesk.gateway.rest",  # /v2/message/send: credentials, one exchange, the answer
    "gwdesk.gateway.http",  # the pooled, verified client: the bytes on the wire
)
IN_SEND = contextvars.ContextVar("in_send", default=False)
"""Set for the click: the tasks and worker threads the send starts inherit it."""


def modules(frame: FrameType | None) -> list[str]:
    """The modules of a frame and its callers, outermost first."""
    names = []
    while frame is not None:
        names.append(frame.f_globals.get("__name__", ""))
        frame = frame.f_back
    return names[::-1]


def awaited(coro: Any) -> list[str]:
    """The modules of a suspended coroutine and of those it awaits, outermost first."""
    names = []
    while coro is not None and hasattr(coro, "cr_frame"):
        if coro.cr_frame is not None:
            names.append(coro.cr_frame.f_globals.get("__name__", ""))
        coro = coro.cr_await
    return names


class Tracer:
    """Each task's creator, and the path when the send's request is made."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.made: dict[asyncio.Task[Any], tuple[asyncio.Task[Any] | None, list[str]]] = {}
        self.path: list[str] = []

    def task(
        self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kw: Any
    ) -> asyncio.Task[Any]:
        made = asyncio.Task(coro, loop=loop, **kw)
        self.made[made] = (asyncio.current_task(loop), modules(sys._getframe(1)))
        return made

    def call(self, frame: FrameType, event: str, _arg: object) -> None:
        if self.path or event != "call" or frame.f_code.co_name != "exchange":
            return
        if "/v2/message/send" not in str(frame.f_locals.get("request")):
            return
        parts, task = [modules(frame)], asyncio.current_task(self.loop)
        while task is not None and task in self.made:
            parent, creator = self.made[task]
            if parent is None or parent not in self.made:
                parts.append(creator)  # started from a slot: the click's own stack
                break
            parts.append(awaited(parent.get_coro()))
            task = parent
        for name in (n for part in reversed(parts) for n in part if n.startswith("gwdesk.")):
            if not self.path or self.path[-1] != name:
                self.path.append(name)


def in_send(call: Callable[[], None]) -> None:
    """`call` as the click makes it: with no task running, `IN_SEND` set."""
    context = contextvars.copy_context()
    context.run(IN_SEND.set, True)
    context.run(call)


async def ready(ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread) -> SendTab:
    """A tab that sent once (a token, pooled connections) with its cost line fresh."""
    tab = await send_tab(ui, qtbot, sandbox)
    fill(tab, "0412 345 678", "Hello there")
    await send_and_wait(tab)
    fill(tab, "0412 345 679", "Hello again")
    await wait_until(lambda: tab.cost.fresh() is not None, 10, "the cost line")
    return tab


async def test_one_sms_crosses_twelve_steps_of_nine_modules_to_its_request(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await ready(ui, qtbot, sandbox)
    loop = asyncio.get_running_loop()
    tracer = Tracer(loop)
    loop.set_task_factory(tracer.task)
    sys.setprofile(tracer.call)
    try:
        loop.call_soon(in_send, tab.send)  # from the loop, as a slot runs: no task running
        await wait_until(lambda: bool(tracer.path) and not tab.sending(), 20)
    finally:
        sys.setprofile(None)
        loop.set_task_factory(None)
    assert tuple(tracer.path) == PATH
    assert len(set(PATH)) <= 10


async def test_one_sms_reads_the_opt_out_list_once(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    tab = await ready(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None
    reads: list[bool] = []
    optouts = store.optouts
    for name in ("opted_out", "opted_out_numbers"):
        read = getattr(optouts, name)

        def counted(*args: Any, _read: Any = read, **kwargs: Any) -> Any:
            reads.append(IN_SEND.get())  # a worker thread inherits the send's context
            return _read(*args, **kwargs)

        monkeypatch.setattr(optouts, name, counted)
    asyncio.get_running_loop().call_soon(in_send, tab.send)
    await wait_until(lambda: len(tab.history.entries()) == 2, 20, "the second send")
    assert reads.count(True) == 1
