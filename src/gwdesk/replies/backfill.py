"""Recovering replies the listener missed, from the gateway's replies backfill.

While the listener is down the gateway retries its webhook for about half a
minute, then gives up; those replies are only in the backfill listing. Its items
carry `DateReceived` in whole seconds like `#RCVDDTS#`, so they meet webhook rows
on the store's natural key and are stored once; an item that matches a stored
reply still adds its `MessageId` (which the webhook does not carry).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Protocol

from gwdesk.domain.models import Reply
from gwdesk.replies.inbox import ReplyInbox
from gwdesk.store.replies import IncomingReply, ReplyStore

CHUNK: Final = 500
"""Replies stored per commit while backfilling: the feed sees progress, a commit stays short."""
OVERLAP: Final = timedelta(hours=1)
"""How far before the newest stored reply a backfill starts: webhooks can arrive out of order."""
FIRST_WINDOW: Final = timedelta(days=1)
"""What a first backfill (nothing stored yet) covers, like the endpoint's own default."""


class RepliesSource(Protocol):
    """What a backfill reads: `GatewayService.replies`."""

    def replies(
        self, start: datetime, end: datetime | None = None, *, page_size: int = 100
    ) -> AsyncIterator[Reply]: ...


@dataclass(frozen=True, slots=True)
class BackfillResult:
    start: datetime
    end: datetime | None
    fetched: int
    added: int
    """Replies that were not stored before: the gap the backfill filled."""
    completed: int
    """Already stored replies that gained a field (their MessageId)."""


def suggested_start(store: ReplyStore, now: datetime) -> datetime:
    """Where a backfill on start should begin: a margin before the newest stored reply.

    Replies dated after `now` are passed over (the store no longer keeps such times,
    but an earlier version did): one reply dated 9999 would otherwise shrink the
    window to the last hour and leave a longer outage's replies unfetched.
    """
    latest = store.latest_received_at(now)
    return now - FIRST_WINDOW if latest is None else min(latest - OVERLAP, now - OVERLAP)


def incoming(item: Reply) -> IncomingReply:
    return IncomingReply(
        from_number=item.from_.strip(),
        to_number=item.to.strip(),
        text=item.message_text,
        received_at=item.date_received,
        message_id=item.message_id,
        source="backfill",
    )


async def backfill(
    source: RepliesSource,
    inbox: ReplyInbox,
    start: datetime,
    end: datetime | None = None,
    *,
    page_size: int = 100,
) -> BackfillResult:
    """Merge the gateway's replies received in [start, end) into the store, without duplicates.

    Gateway errors propagate (`GatewayError`); what was merged before one stays merged.
    """
    fetched = added = completed = 0
    chunk: list[IncomingReply] = []

    async def flush() -> None:
        nonlocal added, completed
        results = await inbox.add_async(chunk)
        added += sum(1 for r in results if r.new)
        completed += sum(1 for r in results if r.updated)
        chunk.clear()

    async for item in source.replies(start, end, page_size=page_size):
        fetched += 1
        chunk.append(incoming(item))
        if len(chunk) >= CHUNK:
            await flush()
    if chunk:
        await flush()
    return BackfillResult(start, end, fetched, added, completed)
