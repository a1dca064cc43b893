"""Reading a whole account's log with `since`, and every page of the reply backfill.

`logs?since=T` returns up to one page of records lodged at or after T, oldest first.
The sync passes the `dateLodged` of the last record it holds, so the boundary
record (and any others lodged in the same instant) comes back again: those already
yielded are dropped by MessageId. A page that adds nothing new ends the sync. If
more records than fit on one page share one `dateLodged`, `since` cannot move past
them; the sync then stops and says so (`stalled`) rather than loop. To resume later
without repeating the boundary record, pass the last `cursor` as `since` and
`at_cursor` as `known`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from typing import Final

from gwdesk.domain.models import LogRecord, Reply
from gwdesk.gateway.rest import RestClient

log = logging.getLogger("gwdesk.gateway.paging")
#: Where a sync of a whole account starts when no earlier cursor is known.
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


class LogSync:
    """`async for record in LogSync(rest, since)`; afterwards `cursor` is where to resume."""

    def __init__(
        self, rest: RestClient, since: datetime | None = None, known: Iterable[str] = ()
    ) -> None:
        self.rest = rest
        self.cursor: datetime = since or EPOCH
        """The `dateLodged` of the newest record yielded (pass it as `since` next time)."""
        self.at_cursor: set[str] = set(known)
        """MessageIds held whose `dateLodged` equals `cursor` (pass them as `known` next time)."""
        self.pages = 0
        self.yielded = 0
        self.stalled = False

    def __aiter__(self) -> AsyncIterator[LogRecord]:
        return self._records()

    async def _records(self) -> AsyncIterator[LogRecord]:
        while True:
            listing = await self.rest.logs(since=self.cursor)
            self.pages += 1
            fresh = [
                r
                for r in listing.messages
                if not (r.date_lodged == self.cursor and r.message_id in self.at_cursor)
                and r.date_lodged >= self.cursor
            ]
            if not fresh:
                if listing.total_records > len(listing.messages):
                    # Records remain, but all of this page share the cursor's instant.
                    self.stalled = True
                    log.warning(
                        "log sync stalled: more than a page of records share dateLodged %s",
                        self.cursor.isoformat(),
                    )
                return
            for record in fresh:
                if record.date_lodged > self.cursor:
                    self.cursor = record.date_lodged
                    self.at_cursor = set()
                if record.date_lodged == self.cursor:
                    self.at_cursor.add(record.message_id)
                self.yielded += 1
                yield record
            if len(listing.messages) >= listing.total_records:
                return


async def iter_replies(
    rest: RestClient, start: datetime, end: datetime | None = None, page_size: int = 100
) -> AsyncIterator[Reply]:
    """Every reply received in [start, end), page after page (the backfill endpoint)."""
    page = 1
    while True:
        result = await rest.replies_page(start, end, page, page_size)
        for item in result.items:
            yield item
        if not result.items or page >= result.total_pages:
            return
        page += 1
