"""Helpers for the Replies tests: a tab on a listening hub, and replies posted like the gateway's."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from pytestqt.qtbot import QtBot

from gwdesk.domain.webhook_time import format_webhook_time
from gwdesk.replies import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.replies.tab import RepliesTab
from gwdesk.ui.reply_hub import ReplyHub
from gwdesk.ui.reply_state import ListenerState, ReplyDelivery
from tests.ui.conftest import UiBundle, wait_until

SYDNEY = ZoneInfo("Australia/Sydney")
"""The sandbox account's zone: webhook times are read in it."""
CUSTOMER = "61412345678"
OURS = "61400000000"


@dataclass
class Deliveries:
    """Every `replies_arrived` signal, to count the batches."""

    batches: list[ReplyDelivery] = field(default_factory=list)

    @property
    def new(self) -> int:
        return sum(len(b.new) for b in self.batches)


def record_deliveries(hub: ReplyHub) -> Deliveries:
    deliveries = Deliveries()
    hub.replies_arrived.connect(deliveries.batches.append)
    return deliveries


async def start_listener(ui: UiBundle, port: int = 0) -> ReplyTemplate:
    """Start the session's listener on an ephemeral port (so parallel runs never collide)."""
    hub = ui.session.replies
    status = await hub.start(port)
    assert status.state is ListenerState.LISTENING, status
    template = hub.template
    assert template is not None
    return template


async def replies_tab(
    ui: UiBundle, qtbot: QtBot, sandbox: SandboxThread, *, listen: bool = True
) -> RepliesTab:
    """A Replies tab on the sandbox's demo account, its listener started (not shown)."""
    await ui.connect(sandbox)
    tab = RepliesTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    if listen:
        await start_listener(ui)
    await wait_until(lambda: tab.model is not None and not tab.model.pending)
    return tab


def webhook_values(
    text: str = "Yes please",
    sender: str = CUSTOMER,
    received: datetime | None = None,
    to: str = OURS,
) -> dict[str, str]:
    moment = received or datetime.now(UTC)
    return {
        "FROM": sender,
        "TO": to,
        "MSG": text,
        "SENTDTS": format_webhook_time(moment - timedelta(seconds=2), SYDNEY),
        "RCVDDTS": format_webhook_time(moment, SYDNEY),
    }


async def post_reply(template: ReplyTemplate, **values: Any) -> httpx.Response:
    """One reply webhook call, as the gateway makes it (GET), from another thread."""
    url = template.fill(webhook_values(**values))

    def call() -> httpx.Response:
        return httpx.get(url, timeout=10)

    return await asyncio.get_running_loop().run_in_executor(None, call)


async def post_raw(url: str, method: str = "GET", **options: Any) -> httpx.Response:
    def call() -> httpx.Response:
        return httpx.request(method, url, timeout=10, **options)

    return await asyncio.get_running_loop().run_in_executor(None, call)


class Flood:
    """`count` distinct replies posted from a thread of its own, `concurrency` at a time."""

    def __init__(self, template: ReplyTemplate, count: int, concurrency: int = 16) -> None:
        self.template = template
        self.count = count
        self.concurrency = concurrency
        self.statuses: list[int] = []
        self._thread = threading.Thread(target=self._run, name="reply-flood", daemon=True)

    def start(self) -> Flood:
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def _run(self) -> None:
        asyncio.run(self._flood())

    async def _flood(self) -> None:
        now = datetime.now(UTC)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for number in range(self.count):
            queue.put_nowait(number)
        limits = httpx.Limits(max_connections=self.concurrency)
        async with httpx.AsyncClient(limits=limits, timeout=30) as client:

            async def worker() -> None:
                while not queue.empty():
                    number = queue.get_nowait()
                    values = webhook_values(f"flood {number}", f"614990{number:05d}", now)
                    response = await client.get(self.template.fill(values))
                    self.statuses.append(response.status_code)

            await asyncio.gather(*(worker() for _ in range(self.concurrency)))
