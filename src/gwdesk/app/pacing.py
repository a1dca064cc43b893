"""A list spread over time: at most N recipients an hour, so that the replies it brings
do not swamp the people who answer them.

A paced list is scheduled in parts (`ScheduledSends.schedule_paced`): requests of
`Pace.chunk` recipients, one every `Pace.interval`, each part a scheduled send of its
own held in the outbox. So the pace lives in the outbox, not in a running process: a
console or receiver restarted (or killed) finds the parts still held at their times
and sends them as they fall due, each exactly once. With sending hours on, the pace
clock stops outside them and goes on when they open (on the profile's clock), rather
than sending the night's parts at once in the morning. Qt-free.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from gwdesk.app.send_values import MAX_RECIPIENTS_PER_REQUEST
from gwdesk.app.sending_hours import SendingHours
from gwdesk.app.sms import refuse

PACE_LEAD: Final = timedelta(seconds=10)
"""A paced list with no time of its own starts this soon (after it is recorded and asked)."""
MOST_PER_HOUR: Final = 360_000
"""The fastest pace (100 a second): faster is simply a list sent now."""
_PACE: Final = re.compile(r"([0-9]{1,7})\s*/\s*(h|hr|hour|m|min|minute)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Pace:
    """At most `per_hour` recipients an hour."""

    per_hour: int

    def __post_init__(self) -> None:
        if not 1 <= self.per_hour <= MOST_PER_HOUR:
            raise refuse(f"A pace is 1 to {MOST_PER_HOUR:,} recipients an hour.", "Pace")

    @property
    def chunk(self) -> int:
        """Recipients per request: a minute's worth (at least 1, at most a request's 100)."""
        return max(1, min(MAX_RECIPIENTS_PER_REQUEST, self.per_hour // 60))

    @property
    def interval(self) -> timedelta:
        """The time between two requests."""
        return timedelta(hours=self.chunk / self.per_hour)

    def times(self, start: datetime, parts: int, hours: SendingHours | None) -> Iterator[datetime]:
        """When each of `parts` requests goes: one every `interval` from `start`, the clock
        stopped outside the sending hours (on the profile's clock) when `hours` apply."""
        moment = start
        for _ in range(parts):
            if hours is not None:
                moment = hours.hours.next_allowed(moment, hours.default_zone)
            yield moment
            moment += self.interval

    def describe(self) -> str:
        return f"{self.per_hour:,} an hour ({self.chunk:,} every {_span(self.interval)})"


def parse_pace(text: str) -> Pace:
    """`600/h`, `10/min` as a `Pace`; refused at Pace otherwise."""
    found = _PACE.fullmatch(text.strip())
    if found is None:
        raise refuse("Give the pace as a number per hour or per minute: 600/h, 10/min.", "Pace")
    count = int(found.group(1))
    return Pace(count * 60 if found.group(2).lower().startswith("m") else count)


def _span(span: timedelta) -> str:
    seconds = span.total_seconds()
    if seconds >= 60 and seconds % 60 < 1:
        minutes = round(seconds / 60)
        return "minute" if minutes == 1 else f"{minutes} minutes"
    return f"{seconds:.0f} seconds" if seconds >= 10 else f"{seconds:.1f} seconds"
