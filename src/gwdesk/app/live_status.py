"""What is shown of a send stays true: its status follows the log, and the log follows sends.

A send's status is recorded as the gateway answered it (ACTIVE, mostly); the log cache
sync (`gwdesk.logs.sync`) later brings the status the gateway holds now (DELIVERED,
FAILED, ...). Every view that lists sends ("Sent this session", a conversation) shows
the log's status once it holds the message: `followed` says which rows change, read
with `sent_statuses` (one batched read of the cache by MessageId, on a reader thread).

`SyncPace` decides when the console syncs next: soon after a send of this console (not
once per message of a list: one sync for every send made before it starts), then every
few seconds while the sends' statuses may still change, and otherwise at the usual
interval. Qt-free: the console's timers ask it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from gwdesk.logs.query import Reading, statuses
from gwdesk.logs.sync import SyncReport
from gwdesk.store.history import HistoryEntry

__all__ = ["HistoryEntry", "SyncPace", "followed", "sent_statuses", "watched_ids"]

INTERVAL: Final = 60.0
"""Seconds between syncs when nothing was sent lately."""
SOON: Final = 2.0
"""Seconds from a send to the sync that brings it (sends meanwhile ride along)."""
HURRY: Final = 5.0
"""Seconds between syncs while a recent send's status may still change."""
HURRY_FOR: Final = 180.0
"""How long after the last send the sync hurries (a delivery receipt mostly comes in
seconds; a later one waits for the usual interval)."""


def sent_statuses(reading: Reading, message_ids: Iterable[str]) -> dict[str, str]:
    """The log cache's status of each of `message_ids` it holds (blocking: a reader's)."""
    return statuses(reading, message_ids)


def watched_ids(entries: Iterable[HistoryEntry]) -> list[str]:
    """The MessageIds whose status a view of `entries` follows: those of sends that went."""
    return sorted({e.message_id for e in entries if e.ok and e.message_id})


def followed(entries: Sequence[HistoryEntry], held: Mapping[str, str]) -> dict[int, HistoryEntry]:
    """The rows of `entries` (by position) whose status the log changed, as they now read.

    A send that did not go keeps what it says (the log never held it); one whose
    message the log holds shows the log's status, the gateway's latest word."""
    changed: dict[int, HistoryEntry] = {}
    for row, entry in enumerate(entries):
        if not entry.ok or not entry.message_id:
            continue
        status = held.get(entry.message_id)
        if status and status != entry.status:
            changed[row] = replace(entry, status=status)
    return changed


@dataclass(slots=True)
class SyncPace:
    """When the next log sync runs (seconds from now), as sends and syncs happen."""

    interval: float = INTERVAL
    soon: float = SOON
    hurry: float = HURRY
    hurry_for: float = HURRY_FOR
    last_send: float | None = None
    """When this console last sent (a monotonic clock's seconds), if it did."""

    def sent(self, now: float) -> float:
        """A send of this console ended at `now`: the sync that brings it is due in this
        many seconds (a sync already due sooner stays as it is)."""
        self.last_send = now
        return self.soon

    def after(self, report: SyncReport | None, now: float) -> float:
        """A sync ended (`report`: None when it failed or was cancelled): the next is due
        in this many seconds. Hurried while a recent send may still change status."""
        recent = self.last_send is not None and now - self.last_send < self.hurry_for
        if recent and report is not None and report.active_left:
            return self.hurry
        return self.interval
