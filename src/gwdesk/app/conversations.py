"""Conversations as work: the flow the console and `gwdesk conversations` share.

A listing filtered as an operator works (mine, unassigned, open, all) with this
operator's unread counts; the changes (assign, take, done, reopen, wait, snooze) and
the read marks (one conversation, or all). The rules themselves are the store's (and,
on a team's server, the server's): this flow checks what was typed, by the field it
came from, and names who "me" is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta, tzinfo
from enum import StrEnum
from typing import Final

from gwdesk.domain.errors import InputRefused
from gwdesk.domain.numbers import DEFAULT_REGION, NumberError, normalise
from gwdesk.store.conversations import (
    DONE,
    OPEN,
    SNOOZED,
    STATES,
    WAITING,
    ConversationError,
    ConversationRow,
    ConversationState,
    ConversationStore,
)

__all__ = [
    "STATES",
    "ConversationRow",
    "ConversationState",
    "ConversationsFlow",
    "Listing",
    "Showing",
    "Snooze",
    "snooze_until",
]

MORNING: Final = time(9)
""""Tomorrow" snoozes until this time on the profile's clock."""


class Snooze(StrEnum):
    """The snoozes offered at a keystroke (a chosen time is the third)."""

    HOUR = "hour"
    TOMORROW = "tomorrow"


def snooze_until(choice: Snooze, now: datetime, zone: tzinfo) -> datetime:
    """An hour from `now`, or 09:00 tomorrow on `zone`'s clock (its wall time, whatever
    the offset that day: a change of daylight saving overnight is the zone's)."""
    if choice is Snooze.HOUR:
        return now + timedelta(hours=1)
    tomorrow = now.astimezone(zone).date() + timedelta(days=1)
    return datetime.combine(tomorrow, MORNING, tzinfo=zone)


class Showing(StrEnum):
    """Which conversations a listing shows."""

    MINE = "mine"
    UNASSIGNED = "unassigned"
    OPEN = "open"
    ALL = "all"


@dataclass(frozen=True, slots=True)
class Listing:
    conversations: list[ConversationRow]
    """Those shown, the latest reply first."""
    unread_conversations: int
    """This operator's, over every conversation (not only those shown)."""
    unread_replies: int


@dataclass(frozen=True, slots=True)
class ConversationsFlow:
    """One operator's conversations (`store`: the profile's; `region` reads a national
    number; `zone`: the profile's clock, where "tomorrow 09:00" is)."""

    store: ConversationStore
    region: str = DEFAULT_REGION
    zone: tzinfo = UTC

    @property
    def me(self) -> str:
        """The name the record gives this operator: what an assignment to "me" names."""
        return self.store.operator

    def number(self, text: str) -> str:
        """A typed number as the conversation's key, or `InputRefused` at `number`."""
        try:
            return normalise(text, self.region)
        except NumberError as exc:
            raise InputRefused("number", str(exc)) from None

    def listing(self, showing: Showing = Showing.ALL, *, now: datetime | None = None) -> Listing:
        rows = self.store.listing(now=now or datetime.now(UTC))
        shown = [row for row in rows if self._shows(showing, row.kept)]
        unread_conversations, unread_replies = self.store.unread()
        return Listing(shown, unread_conversations, unread_replies)

    def _shows(self, showing: Showing, kept: ConversationState) -> bool:
        if showing is Showing.MINE:
            return bool(self.me) and kept.assigned_to == self.me
        if showing is Showing.UNASSIGNED:
            return kept.assigned_to is None
        if showing is Showing.OPEN:
            return kept.state == OPEN
        return True

    def state(self, number: str) -> ConversationState:
        """What is kept of one conversation now (a number never changed: open, nobody's)."""
        return self._changed(lambda key: self.store.get(key), number, "number")

    # ---- changes -----------------------------------------------------------------------

    def assign(self, number: str, operator: str | None) -> ConversationState:
        """To `operator` (None: to nobody)."""
        return self._changed(lambda key: self.store.assign(key, operator), number, "operator")

    def take(self, number: str) -> ConversationState:
        """Assign to this operator ("mine")."""
        if not self.me:
            raise InputRefused("operator", "This desk has no operator's name to take it as.")
        return self.assign(number, self.me)

    def done(self, number: str) -> ConversationState:
        return self._state(number, DONE)

    def reopen(self, number: str) -> ConversationState:
        return self._state(number, OPEN)

    def wait(self, number: str) -> ConversationState:
        """Waiting on the customer (their next reply re-opens it)."""
        return self._state(number, WAITING)

    def snooze(self, number: str, until: datetime) -> ConversationState:
        return self._changed(
            lambda key: self.store.set_state(key, SNOOZED, until=until), number, "until"
        )

    def snooze_for(
        self, number: str, choice: Snooze, *, now: datetime | None = None
    ) -> ConversationState:
        """For an hour, or until tomorrow 09:00 on the profile's clock."""
        return self.snooze(number, snooze_until(choice, now or datetime.now(UTC), self.zone))

    def on_my_clock(self, wall: datetime) -> datetime:
        """A time picked on the profile's clock (no offset given) as the moment it is."""
        return wall if wall.tzinfo is not None else wall.replace(tzinfo=self.zone)

    def operators(self) -> list[str]:
        """Whom a conversation can be assigned to, as the record names them (sorted)."""
        return self.store.operators()

    def _state(self, number: str, state: str) -> ConversationState:
        return self._changed(lambda key: self.store.set_state(key, state), number, "state")

    def _changed(
        self, change: Callable[[str], ConversationState], number: str, field: str
    ) -> ConversationState:
        key = self.number(number)
        try:
            return change(key)
        except ConversationError as exc:
            raise InputRefused(field, str(exc)) from None

    # ---- read marks --------------------------------------------------------------------

    def mark_read(self, number: str) -> int:
        """Every reply of `number` stored now is read, by this operator."""
        return self.store.mark_read(self.number(number))

    def mark_all_read(self) -> int:
        return self.store.mark_all_read()
