"""Sending hours on the customer's clock: when a list or a send for later may reach each
recipient.

The office agrees on one window per day kind (weekdays, weekends: `QUIET_HOURS`, on by
default 08:00–20:00; `QUIET_HOURS_ON` turns them off), kept where the team's settings
are. Each recipient's clock is their contact's zone field (a field named "zone",
"time zone" or "timezone" holding an IANA name such as Australia/Perth), else the
profile's zone: a number alone does not say where its owner is. A send for later is
split by the moment each recipient's window next allows it (`split`): one scheduled
send per moment, so a 21:00 send waits until 08:00 in Perth as it does in Sydney. A
list sent now asks first when some of it would land outside (`outside`). A single
message sent now is the operator's own call and is never held. Qt-free.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfo

from gwdesk.domain.quiet_hours import QuietHours
from gwdesk.domain.settings import QUIET_HOURS, QUIET_HOURS_ON
from gwdesk.domain.templates import field_key
from gwdesk.domain.zones import ZoneError, zone_named
from gwdesk.store.contacts import ContactStore
from gwdesk.store.stored_settings import StoredSettings

ZONE_FIELDS: Final = frozenset(field_key(name) for name in ("zone", "time zone", "timezone"))
"""The contact fields that give a recipient's zone (matched as merge fields are)."""


@dataclass(frozen=True, slots=True)
class Outside:
    """The recipients of a send now that are outside their sending hours."""

    numbers: tuple[str, ...]
    opens: datetime
    """The first moment one of them may be reached."""
    hours: QuietHours


@dataclass(frozen=True, slots=True)
class SendingHours:
    """The office's window and each recipient's clock (see the module docstring)."""

    hours: QuietHours
    default_zone: ZoneInfo
    zones: Mapping[str, ZoneInfo]
    """The recipients whose contact names their zone."""

    def zone_of(self, number: str) -> ZoneInfo:
        return self.zones.get(number, self.default_zone)

    def split(self, numbers: Sequence[str], at: datetime) -> list[tuple[datetime, tuple[str, ...]]]:
        """`numbers` grouped by when each may first be reached at or after `at`, soonest
        first (one group, at `at`, when every one of them may be reached then)."""
        groups: dict[datetime, list[str]] = {}
        for number in numbers:
            groups.setdefault(self.hours.next_allowed(at, self.zone_of(number)), []).append(number)
        return [(moment, tuple(found)) for moment, found in sorted(groups.items())]

    def outside(self, numbers: Iterable[str], now: datetime) -> Outside | None:
        """Those of `numbers` a send now would reach outside their hours (None: none)."""
        late: list[str] = []
        opens: datetime | None = None
        for number in numbers:
            allowed = self.hours.next_allowed(now, self.zone_of(number))
            if allowed != now:
                late.append(number)
                opens = allowed if opens is None else min(opens, allowed)
        return None if opens is None else Outside(tuple(late), opens, self.hours)


def zones_of(contacts: ContactStore | None, numbers: Sequence[str]) -> dict[str, ZoneInfo]:
    """The zone each contact holding one of `numbers` names (an unreadable one is left
    out: that recipient is on the profile's clock). Blocking: a read of the store."""
    if contacts is None or not numbers:
        return {}
    found: dict[str, ZoneInfo] = {}
    for number, contact in contacts.by_numbers(numbers).items():
        named = [v.strip() for k, v in contact.values().items() if k in ZONE_FIELDS and v.strip()]
        if named:
            with contextlib.suppress(ZoneError):
                found[number] = zone_named(named[0])
    return found


async def sending_hours(
    settings: StoredSettings | None,
    contacts: ContactStore | None,
    default_zone: ZoneInfo,
    numbers: Sequence[str],
) -> SendingHours | None:
    """The office's sending hours for these recipients (None: turned off, or no store to
    say them), read off the caller's thread."""
    if settings is None:
        return None

    def read() -> SendingHours | None:
        if not settings.get(QUIET_HOURS_ON):
            return None
        hours = QuietHours.from_json(settings.get(QUIET_HOURS))
        return SendingHours(hours, default_zone, zones_of(contacts, numbers))

    return await asyncio.to_thread(read)
