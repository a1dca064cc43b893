"""Log records in the wire's shape, and a profile store to put them in."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from gwdesk.logs.cache import LogCache, LogCacheWriter, WriteResult
from gwdesk.logs.rows import TimeReader, to_row
from gwdesk.store.local import LocalStore
from gwdesk.store.reader import Reading

ZONE = ZoneInfo("Australia/Sydney")
START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def record(n: int, **fields: Any) -> dict[str, Any]:
    """Record number `n`: lodged `n` minutes after START, in the gateway's format."""
    lodged = (START + timedelta(minutes=n)).astimezone(ZONE)
    base: dict[str, Any] = {
        "messageId": f"2025030109{n:010d}",
        "status": "DELIVERED",
        "dateSent": lodged.isoformat(timespec="microseconds"),
        "dateLodged": lodged.isoformat(timespec="microseconds"),
        "deliveryReceiptReceived": None,
        "sender": "demo",
        "costcentre": "",
        "from": "61400000000",
        "to": f"614{n % 1000:08d}",
        "subject": None,
        "message": f"Message number {n}",
        "parts": 1,
        "type": "SMS",
        "senderid": 1,
        "senderserviceid": 1,
        "replytype": "",
        "replypath": "",
        "trackingId": f"00000000-0000-4000-8000-{n:012d}",
        "batchTrackingId": None,
    }
    base.update(fields)
    return base


def write(writer: LogCacheWriter, records: Iterable[dict[str, Any]]) -> WriteResult:
    rows = []
    dropped = 0
    times = TimeReader(ZONE)
    for item in records:
        row = to_row(item, times, 1)
        if row is None:
            dropped += 1
        else:
            rows.append(row)
    return writer.write(rows, dropped=dropped)


@contextmanager
def cache(path: Path) -> Iterator[tuple[LocalStore, LogCacheWriter]]:
    store = LocalStore(path)
    writer = LogCache(store).writer()
    try:
        yield store, writer
    finally:
        writer.close()
        store.close()


def reading(store: LocalStore) -> Reading:
    """The store's own connection as a read, for queries in tests (the console uses a reader)."""
    return Reading(store.conn)
