"""A list send made twice: the same text to most of the same recipients a short while ago.

The profile's send history says which sends of a text were made within the window
(the profile's repeat window: 24 hours unless the operator changed it) and the numbers each reached
(`HistoryStore.reached_with`: a list's numbers are its outbox batch's). A new send
of that text is a duplicate when those sends together reached at least `OVERLAP` of
its recipients: the same list, or most of it (a list edited a little, or sent from
another file). The question then says when and to how many ("sent 2 hours ago to
198 of these 200").
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from gwdesk.app.questions import Ask, sent_before
from gwdesk.store.history import Reached

DUPLICATE_WINDOW: Final = timedelta(hours=24)
"""How far back a send of the same text counts when the profile says nothing (the
setting `sending.repeat_window_hours` has the same default)."""
OVERLAP: Final = 0.8
"""The share of a send's recipients an earlier send of the text must have reached."""


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Earlier sends of the text that reached most of these recipients."""

    reached: int
    """Of the new send's recipients, those the earlier sends reached."""
    recipients: int
    last: datetime
    """When the last of them was made."""
    sends: int = 1

    def ask(self, now: datetime) -> Ask:
        return sent_before(ago(now - self.last), self.reached, self.recipients, self.sends)


def duplicate_of(
    numbers: Collection[str], earlier: Sequence[Reached], *, overlap: float = OVERLAP
) -> Duplicate | None:
    """Whether the earlier sends of a text reached at least `overlap` of `numbers`."""
    wanted = set(numbers)
    if not wanted:
        return None
    reached: set[str] = set()
    counted: list[Reached] = []
    for send in earlier:
        hit = send.numbers & wanted
        if hit:
            reached |= hit
            counted.append(send)
    if not counted or len(reached) < overlap * len(wanted):
        return None
    last = max(send.at for send in counted)
    return Duplicate(len(reached), len(wanted), last, len(counted))


def ago(delta: timedelta) -> str:
    """`2 hours ago`, `5 minutes ago`, `just now`."""
    seconds = max(0, int(delta.total_seconds()))
    if seconds < 60:
        return "just now"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} minute{'s' if minutes != 1 else ''} ago"
    hours = minutes // 60
    if hours < 48:
        return f"{hours} hour{'s' if hours != 1 else ''} ago"
    days = hours // 24
    return f"{days} days ago"
