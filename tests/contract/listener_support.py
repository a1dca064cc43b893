"""A reply listener on loopback for tests, storing into a real profile file."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from gwdesk.replies import ListenerInfo, ListenerLimits, ReplyInbox, ReplyListener
from gwdesk.replies.template import ReplyTemplate
from gwdesk.store.replies import ReplyStore

SYDNEY = ZoneInfo("Australia/Sydney")
CUSTOMER = "61412345678"
OURS = "61400000000"


@dataclass
class Running:
    store: ReplyStore
    inbox: ReplyInbox
    listener: ReplyListener
    info: ListenerInfo

    @property
    def template(self) -> ReplyTemplate:
        return self.info.template

    def url(self, **values: str) -> str:
        """A filled-in reply webhook URL, as the gateway would call it."""
        return self.template.fill(webhook_values(**values))


def webhook_values(**overrides: str) -> dict[str, str]:
    values = {
        "FROM": CUSTOMER,
        "TO": OURS,
        "MSG": "Yes please",
        "SENTDTS": "05-Jan-2024 14:04:05",
        "RCVDDTS": "05-Jan-2024 14:04:07",
    }
    values.update(overrides)
    return values


@contextmanager
def running_listener(path: Path, *, busy_timeout: float = 2.0, **options: Any) -> Iterator[Running]:
    """A started listener (ephemeral port unless given) with its store and inbox."""
    options.setdefault("port", 0)
    options.setdefault("limits", ListenerLimits())
    store = ReplyStore(path, busy_timeout=busy_timeout)
    inbox = ReplyInbox(store).start()
    listener = ReplyListener(inbox, options.pop("zone", SYDNEY), **options)
    try:
        info = listener.start()
        yield Running(store, inbox, listener, info)
    finally:
        listener.stop()
        inbox.close()
        store.close()
