"""Status: looking a message up, and following a list until its messages exist.

`look_up` is the Status tab's question, one key at a time as the gateway demands:
REST answers by MessageId, BatchCode or ExternalSystemId, the legacy Lodge service
answers `GetMessageStatusXML` by MsgID. Both come back as `StatusRow`s, one shape
whatever the interface (each row keeps what its source gave).

`follow` is the Batch tab's "Follow progress": the gateway accepts a request of
100 at once and creates its messages in the background, so the status endpoint is
asked, per lodged request (by BatchCode, else ExternalSystemId), how many exist
yet, until all do. A request whose status cannot be asked several times in a row
is given up on (the others go on); `Progress.again` asks about it anew.

Qt-free; the tabs only render what comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final

from gwdesk.app.send_values import Changed, ours, recipient_digits
from gwdesk.app.sms import refuse
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.models import Message, MessageStatus
from gwdesk.gateway.service import GatewayService
from gwdesk.store.outbox import EntryState, OutboxEntry

log = logging.getLogger("gwdesk.app.status")
REST: Final = "REST"
LODGE: Final = "Lodge"
NO_STATUS: Final = "(no status)"
#: Longer values are no key the gateway gave out; refused before any request.
MAX_KEY: Final = 200
FOLLOW_INTERVAL: Final = 1.0
FOLLOW_CONCURRENCY: Final = 2
#: Status queries in a row that may fail before following gives up on a request.
FOLLOW_GIVE_UP: Final = 5


class Key(StrEnum):
    """What a lookup is by."""

    MESSAGE_ID = "message_id"
    BATCH_CODE = "batch_code"
    EXTERNAL_SYSTEM_ID = "external_system_id"
    LODGE_MSG_ID = "legacy_msg_id"
    """A MsgID, asked of the Lodge service."""

    @property
    def source(self) -> str:
        """The interface that answers it (`REST` or `LODGE`)."""
        return LODGE if self is Key.LODGE_MSG_ID else REST


# ---- looking up ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatusRow:
    """One message as a lookup found it, from either interface."""

    phone_number: str
    message_id: str
    status: str
    source: str = REST
    external_system_id: str | None = None
    tags: str | None = None
    date_lodged: datetime | str | None = None
    date_sent: datetime | str | None = None

    @classmethod
    def from_message(cls, message: Message) -> StatusRow:
        return cls(
            phone_number=message.phone_number,
            message_id=message.message_id,
            status=message.status,
            external_system_id=message.external_system_id,
            tags=message.tags,
        )

    @classmethod
    def from_lodge(cls, answer: MessageStatus, asked: str) -> StatusRow:
        """A Lodge answer; its MsgID falls back to the id asked for when the service omits it."""
        return cls(
            phone_number=answer.phone_number or "",
            message_id=answer.msg_id or asked,
            status=answer.status or "",
            source=LODGE,
            date_lodged=answer.date_lodged,
            date_sent=answer.date_sent,
        )


def check_key(kind: str, value: str) -> tuple[Key, str]:
    """The lookup as typed, checked before any request (a form shows the refusal at once)."""
    try:
        key = Key(kind)
    except ValueError:
        raise refuse(f"Messages cannot be looked up by {kind[:40]!r}.", "kind") from None
    text = value.strip()
    wire_field = "MsgID" if key is Key.LODGE_MSG_ID else key.value
    if not text:
        raise refuse("Type the value to look up.", wire_field)
    if not text.isprintable():
        raise refuse("The value holds control characters: paste the key alone.", wire_field)
    if len(text) > MAX_KEY:
        raise refuse(f"The value is longer than {MAX_KEY} characters: no key is.", wire_field)
    return key, text


async def look_up(gateway: GatewayService, kind: str, value: str) -> list[StatusRow]:
    """Every message `value` names, by `kind` (a `Key`); a refusal is a `GatewayError`."""
    key, text = check_key(kind, value)
    if key is Key.LODGE_MSG_ID:
        answer = await gateway.lodge.get_message_status_xml(text)
        return [StatusRow.from_lodge(answer, text)]
    messages = await gateway.status(**{key.value: text})
    return [StatusRow.from_message(m) for m in messages]


def summarise(rows: Sequence[StatusRow]) -> str:
    """`3 messages: 1 ACTIVE, 2 DELIVERED`: a lookup's answer in one line."""
    if not rows:
        return "No messages found."
    counts = Counter(r.status or NO_STATUS for r in rows)
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    noun = "message" if len(rows) == 1 else "messages"
    return f"{len(rows)} {noun}: {parts}"


# ---- following a list ----------------------------------------------------------------------


@dataclass(slots=True)
class _Seen:
    created: int = 0
    failures: int = 0
    """Status queries in a row that failed."""
    note: str = ""


class Progress:
    """What following has learnt of a list's lodged requests: messages created so far.

    Keyed by outbox entry id; the entries themselves are the outbox's rows, passed in
    as they now stand. A lodged entry counts what its own answer named (`found`) until
    a status query says more.
    """

    def __init__(self) -> None:
        self._seen: dict[int, _Seen] = {}

    def created(self, entry: OutboxEntry) -> int:
        if entry.state is not EntryState.LODGED:
            return 0
        seen = self._seen.get(entry.id)
        known = max(entry.found, seen.created if seen is not None else 0)
        return min(known, entry.recipient_count)

    def complete(self, entry: OutboxEntry) -> bool:
        return entry.state is EntryState.LODGED and self.created(entry) >= entry.recipient_count

    def given_up(self, entry: OutboxEntry) -> str:
        """Why following stopped asking about `entry` ('' while it asks)."""
        seen = self._seen.get(entry.id)
        return seen.note if seen is not None else ""

    def total(self, entries: Sequence[OutboxEntry]) -> int:
        return sum(self.created(e) for e in entries)

    def due(self, entries: Sequence[OutboxEntry]) -> list[OutboxEntry]:
        """Lodged entries whose messages are not all created, not given up on."""
        return [
            e
            for e in entries
            if e.state is EntryState.LODGED
            and (e.batch_code or e.external_system_id)
            and not self.complete(e)
            and self._seen.get(e.id, _Seen()).failures < FOLLOW_GIVE_UP
        ]

    def again(self) -> None:
        """The operator asked to follow again: requests given up on are asked about anew."""
        for seen in self._seen.values():
            seen.failures, seen.note = 0, ""

    def learnt(self, entry: OutboxEntry, created: int) -> bool:
        """A status query answered; whether it changed what is shown."""
        seen = self._seen.setdefault(entry.id, _Seen())
        before = self.created(entry)
        seen.failures = 0
        seen.created = max(seen.created, min(created, entry.recipient_count))
        return self.created(entry) != before

    def failed(self, entry: OutboxEntry, error: GatewayError) -> bool:
        """A status query failed; whether following now gives up on the entry."""
        seen = self._seen.setdefault(entry.id, _Seen())
        seen.failures += 1
        if seen.failures < FOLLOW_GIVE_UP:
            return False
        seen.note = f"progress unknown: {error.message}"
        return True


async def created_of(gateway: GatewayService, entry: OutboxEntry) -> int:
    """How many of a lodged entry's messages the gateway has created so far."""
    if entry.batch_code:
        messages = await gateway.status(batch_code=entry.batch_code)
        return len(messages)
    messages = await gateway.status(external_system_id=entry.external_system_id)
    # An operator's own ExternalSystemId may name other sends too: count this one's.
    wanted = None if entry.own_id else recipient_digits(entry.recipients)
    return len(ours(messages, frozenset(), wanted))


async def follow(
    gateway: GatewayService,
    entries: Callable[[], Sequence[OutboxEntry]],
    progress: Progress,
    *,
    stop: asyncio.Event,
    busy: Callable[[], bool] = lambda: False,
    on_change: Changed | None = None,
    interval: float = FOLLOW_INTERVAL,
) -> None:
    """Poll the status endpoint for each lodged entry until its messages are all created.

    `entries` are the list's rows as they now stand (read each round: a send may
    still be lodging more, which `busy` says); it ends when nothing is due and
    nothing is busy, or when `stop` is set. `on_change` gets each entry whose shown
    progress changed (a count, or being given up on).
    """
    gate = asyncio.Semaphore(FOLLOW_CONCURRENCY)
    tell = on_change or (lambda _entry: None)

    async def look(entry: OutboxEntry) -> None:
        async with gate:
            if stop.is_set():
                return
            try:
                created = await created_of(gateway, entry)
            except GatewayError as exc:
                log.info("status of request %d: %s", entry.seq, exc.message)
                if progress.failed(entry, exc):
                    tell(entry)
                return
        if progress.learnt(entry, created):
            tell(entry)

    while not stop.is_set():
        due = progress.due(entries())
        if not due and not busy():
            return
        await asyncio.gather(*(look(e) for e in due))
        if not progress.due(entries()) and not busy():
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
