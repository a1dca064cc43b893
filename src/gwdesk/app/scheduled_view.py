"""The Scheduled view's reads and words, Qt-free: held sends with their contacts' names,
when each goes in words, what a console asks about sends it missed, what it says when
one went, and numbers as typed made into the list a held send is given.

The console renders these (`ui/scheduled/`); keeping them here lets a test read them
without a window, and keeps one wording wherever a scheduled send is spoken of.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Final

from gwdesk.app.scheduled import ScheduledSend, ScheduledSends
from gwdesk.app.sending import Outcome
from gwdesk.domain.errors import StoreError, ValidationError
from gwdesk.domain.numbers import display
from gwdesk.importing.recipients import check_pasted
from gwdesk.store.contacts import ContactStore

log = logging.getLogger("gwdesk.app.scheduled_view")
SHOWN_NUMBERS: Final = 2
"""Numbers a row names before "+N more" (each with its contact's name, if any)."""
REFUSED_SHOWN: Final = 3
"""Unusable numbers a refusal quotes before "and N more"."""
RECIPIENTS: Final = "Recipients"
"""The field a refused list of numbers is shown at."""


@dataclass(frozen=True, slots=True)
class ScheduledRow:
    """A held send as the view lists it: the send, and the names of the numbers it shows."""

    send: ScheduledSend
    names: Mapping[str, str]
    """Contact names of `shown` (a number no named contact holds is not in it)."""

    @property
    def shown(self) -> tuple[str, ...]:
        return self.send.recipients[:SHOWN_NUMBERS]

    def recipients_text(self) -> str:
        """`3 · Ann Lee (+61 412 000 101), +61 412 000 102, +1 more`."""
        count = len(self.send.recipients)
        named = ", ".join(self.number_text(n) for n in self.shown)
        more = f", +{count - len(self.shown):,} more" if count > len(self.shown) else ""
        return f"{count:,} · {named}{more}" if count else "no recipients"

    def number_text(self, number: str) -> str:
        name = self.names.get(number, "")
        return f"{name} ({display(number)})" if name else display(number)


async def scheduled_rows(
    scheduled: ScheduledSends, contacts: ContactStore | None
) -> list[ScheduledRow]:
    """The account's held sends, soonest first, with the names of the numbers each shows
    (one read of the address book for them all; none when it cannot be read now)."""
    listed = await scheduled.listed()
    wanted = list(dict.fromkeys(n for s in listed for n in s.recipients[:SHOWN_NUMBERS]))
    names = await _names(contacts, wanted)
    return [
        ScheduledRow(s, {n: names[n] for n in s.recipients[:SHOWN_NUMBERS] if n in names})
        for s in listed
    ]


async def _names(contacts: ContactStore | None, numbers: Sequence[str]) -> dict[str, str]:
    if contacts is None or not numbers:
        return {}
    try:
        return await asyncio.to_thread(contacts.names, numbers)
    except StoreError as exc:
        log.warning("contacts' names could not be read: %s", exc)
        return {}


# ---- times in words ----------------------------------------------------------------------------


def _span(delta: timedelta) -> str:
    """`40 min`, `2 h`, `2 h 5 min`, `3 days`: a length of time as a glance takes it."""
    minutes = round(delta.total_seconds() / 60)
    if minutes < 60:
        return f"{max(minutes, 1)} min"
    hours, rest = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {rest} min" if rest and hours < 6 else f"{hours} h"
    days = round(hours / 24)
    return "1 day" if days == 1 else f"{days} days"


def until(due: datetime | None, now: datetime) -> str:
    """When a held send goes, from `now`: `in 2 h`, `due now`, `3 h late, not sent`."""
    if due is None:
        return "its time cannot be read"
    ahead = due - now
    if ahead >= timedelta(seconds=30):
        return f"in {_span(ahead)}"
    if ahead > -timedelta(minutes=2):
        return "due now"
    return f"{_span(-ahead)} late, not sent"


def overdue(due: datetime | None, now: datetime) -> bool:
    """A send whose time passed a while ago and is still held: it waits for the operator."""
    return due is not None and now - due >= timedelta(minutes=2)


def day_and_time(moment: datetime, now: datetime, zone: tzinfo | None = None) -> str:
    """`09:00 today`, `17:30 yesterday`, `09:00 tomorrow`, `09:00 Mon 1 Dec`: in `zone`
    (None: the operator's own)."""
    local, today = moment.astimezone(zone), now.astimezone(zone).date()
    day = {
        today: "today",
        today - timedelta(days=1): "yesterday",
        today + timedelta(days=1): "tomorrow",
    }.get(local.date())
    if day is None:
        year = f" {local.year}" if local.year != today.year else ""
        day = f"{local:%a} {local.day} {local:%b}{year}"
    return f"{local:%H:%M} {day}"


def missed_question(
    missed: Sequence[ScheduledSend], now: datetime, zone: tzinfo | None = None
) -> str:
    """`3 scheduled sends were due while gwdesk was closed (earliest 09:00 today).`"""
    times = [s.due for s in missed if s.due is not None]
    when = ""
    if times:
        at = day_and_time(min(times), now, zone)
        when = f" (earliest {at})" if len(missed) > 1 else f" ({at})"
    if len(missed) == 1:
        return f"1 scheduled send was due while gwdesk was closed{when}."
    return f"{len(missed)} scheduled sends were due while gwdesk was closed{when}."


MISSED_CHOICES: Final = (
    "Send now: they go at once, late.\n"
    "Review: they stay in the Scheduled tab, not sent, until you send, move or cancel "
    "each one; the others go at their time."
)


def review_since(missed: Iterable[ScheduledSend]) -> datetime | None:
    """Where serving starts when the operator chose to review the missed sends: just after
    the last of them, so each stays held and every send due later goes (None: none)."""
    times = [s.due for s in missed if s.due is not None]
    return max(times) + timedelta(microseconds=1) if times else None


def went_text(outcome: Outcome) -> tuple[str, bool]:
    """What the status bar says when a scheduled send went (text, all lodged)."""
    lodged, total = outcome.lodged_recipients, outcome.recipients
    label = " ".join(outcome.batch.label.split())
    quoted = f" “{label[:40]}{'…' if len(label) > 40 else ''}”" if label else ""
    if outcome.ok:
        noun = "recipient" if lodged == 1 else "recipients"
        return (f"Scheduled send{quoted} went: {lodged:,} {noun} lodged.", True)
    reason = outcome.halted or (outcome.error.message if outcome.error is not None else "")
    why = f": {reason}" if reason else ""
    return (
        f"Scheduled send{quoted}: {lodged:,} of {total:,} recipients lodged{why}. "
        "File ▸ Outbox… shows the rest.",
        False,
    )


# ---- numbers as typed --------------------------------------------------------------------------


def checked_numbers(text: str, region: str) -> tuple[str, ...]:
    """The numbers typed (one a line, or split by commas or semicolons) as international
    digits, each once; refused at Recipients when none is typed or any cannot be used."""
    checked = check_pasted(text, region)
    if checked.invalid:
        bad = checked.invalid
        shown = "; ".join(f"line {r.row} “{r.text[:30]}”: {r.reason}" for r in bad[:REFUSED_SHOWN])
        more = f" (and {len(bad) - REFUSED_SHOWN} more)" if len(bad) > REFUSED_SHOWN else ""
        raise ValidationError(
            f"Not usable: {shown}{more}. Fix or remove them.", field=RECIPIENTS, status=None
        )
    if not checked.numbers:
        raise ValidationError("Type at least one number.", field=RECIPIENTS, status=None)
    return checked.numbers
