"""The two ways a profile's console gets its replies, one strategy each.

- `OwnListener`, a one-desk profile: this console's listener takes the replies (it
  starts with the session unless the operator stopped it), two-way sends route replies
  to its `ReplyPath`, and what the inbox stores is what the views are handed.
- `OfficeReceiver`, a team profile (its replies on the office's server): the office's
  receiver (`gwdesk listen --store`) takes them, so this console's listener does not
  start by itself. Every "replies" change the server reports (and the resync after a
  reconnection) reads what was stored past the last reply handed over (`ReplyCatchUp`,
  one read at a time), this console's own included, in the order they were committed; a
  row this gwdesk cannot read is passed over and counted, so the next reply still shows
  and the operator knows one did not. Two-way sends route replies to the ReplyPath the
  receiver published, read again on "settings" changes. A read that fails (the server
  away) is logged and made again on the next change: nothing waits on it.

`mode_for` picks one when the profile opens; the inbox flow (`gwdesk.app.reply_inbox`)
asks it, and never which it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from gwdesk.app.catch_up import ReplyCatchUp
from gwdesk.app.handoff import Handoff
from gwdesk.app.reply_state import (
    LISTENER_OFF,
    NO_TEAM_ROUTE,
    InboxEvents,
    ListenerSettings,
    ListenerState,
    ListenerStatus,
    SettingsSource,
)
from gwdesk.domain.settings import TEAM_REPLY_PATH
from gwdesk.store.changes import RESYNC
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import ReplyStore, StoredReply

if TYPE_CHECKING:
    from gwdesk.replies import ReplyTemplate

log = logging.getLogger("gwdesk.replies")
HandOver = Callable[[list[StoredReply]], None]
"""How a mode hands replies it read itself to the flow (as a drain would)."""


class ReplyMode(Protocol):
    """What differs between a one-desk profile and a team's (see the module docstring)."""

    route_problem: str
    """Why two-way sends have nowhere to route replies, when they have not."""
    team_route: bool
    """Replies are routed to the office's receiver, not this console."""

    @property
    def unreadable(self) -> int:
        """Replies passed over so far because this gwdesk cannot read them."""
        ...

    def stopped(self) -> ListenerStatus:
        """The status of this console's listener when it is not running."""
        ...

    def listens_on_connect(self, settings: ListenerSettings) -> bool:
        """Whether this console's listener starts with the session."""
        ...

    def route(self, listening: ReplyTemplate | None) -> ReplyTemplate | None:
        """Where two-way sends route replies, given this console's listener's template."""
        ...

    def from_feed(self, new: list[StoredReply]) -> list[StoredReply]:
        """Of the replies this console's inbox stored, those the views are handed from it."""
        ...

    def open(self) -> None:
        """The profile opened: read what the mode follows."""
        ...

    def counted(self, latest_id: int) -> None:
        """The unread figures were read: the views show the store up to `latest_id`."""
        ...

    def tables_changed(self, tables: frozenset[str]) -> bool:
        """The shared tables another client changed (`{"*"}`: everything may have): read
        what concerns replies; True when the unread figures must be read again."""
        ...

    def close(self) -> None: ...


class OwnListener:
    """A one-desk profile: this console listens, and its inbox feeds the views."""

    route_problem = LISTENER_OFF
    team_route = False
    unreadable = 0

    def stopped(self) -> ListenerStatus:
        return ListenerStatus(ListenerState.STOPPED)

    def listens_on_connect(self, settings: ListenerSettings) -> bool:
        return settings.enabled

    def route(self, listening: ReplyTemplate | None) -> ReplyTemplate | None:
        return listening

    def from_feed(self, new: list[StoredReply]) -> list[StoredReply]:
        return new

    def open(self) -> None:
        """Nothing to follow: the listener stores what the views are handed."""

    def counted(self, latest_id: int) -> None:
        """Nothing to catch up with."""

    def tables_changed(self, tables: frozenset[str]) -> bool:
        return False

    def close(self) -> None:
        """Nothing of its own to stop."""


class OfficeReceiver:
    """A team profile: the office's receiver listens; the server's feed is followed."""

    route_problem = NO_TEAM_ROUTE
    team_route = True

    def __init__(
        self,
        replies: ReplyStore,
        settings: SettingsSource,
        handoff: Handoff,
        events: InboxEvents,
        hand_over: HandOver,
    ) -> None:
        self._replies = replies
        self._settings = settings
        self._events = events
        self._hand_over = hand_over
        self._catch_up: ReplyCatchUp | None = None
        """From the first count on: the replies others stored since (None before)."""
        self._unreadable = 0
        self._published: ReplyTemplate | None = None
        self._catching = handoff.rereads(self._read_new, self._caught_up, "team replies")
        self._route_read = handoff.rereads(self._read_route, self._route_read_done, "ReplyPath")

    @property
    def unreadable(self) -> int:
        return self._unreadable

    def stopped(self) -> ListenerStatus:
        return ListenerStatus(ListenerState.STOPPED, team=True)

    def listens_on_connect(self, settings: ListenerSettings) -> bool:
        return False  # the office's receiver listens for the team

    def route(self, listening: ReplyTemplate | None) -> ReplyTemplate | None:
        return self._published

    def from_feed(self, new: list[StoredReply]) -> list[StoredReply]:
        # This console's own new replies come from the server's feed too (`_caught_up`),
        # in the order they were committed: handed over once, from there.
        return []

    def open(self) -> None:
        self._route_read.request()

    def counted(self, latest_id: int) -> None:
        if self._catch_up is None:
            # Views read the store as it is now; from here on, what others store.
            self._catch_up = ReplyCatchUp(self._replies, latest_id)
            self._catching.request()

    def tables_changed(self, tables: frozenset[str]) -> bool:
        everything = RESYNC in tables
        recount = False
        if everything or "replies" in tables:
            if self._catch_up is not None:
                self._catching.request()
            else:
                recount = True  # the first count failed (the server away): again now
        if everything or "settings" in tables:
            self._route_read.request()
        return recount

    def close(self) -> None:
        self._catching.stop()
        self._route_read.stop()
        self._catch_up = None
        if self._published is not None:
            self._published = None
            self._events.route_changed()

    # ---- reads (blocking: run off the loop, one at a time) ------------------------------------

    def _read_new(self) -> tuple[list[StoredReply], int]:
        """What others stored since, and how many rows were passed over so far."""
        catch_up = self._catch_up
        if catch_up is None:
            return ([], 0)
        return (catch_up.read(), catch_up.unreadable)

    def _caught_up(self, read: tuple[list[StoredReply], int]) -> None:
        replies, unreadable = read
        if unreadable > self._unreadable:
            self._unreadable = unreadable
            self._events.unreadable_passed(unreadable)
        if replies:
            self._hand_over(replies)

    def _read_route(self) -> ReplyTemplate | None:
        from gwdesk.replies.template import ReplyTemplate, TemplateError, team_route

        published = self._settings.get(TEAM_REPLY_PATH)
        if not published:
            return None
        try:
            return team_route(ReplyTemplate.parse(published))
        except TemplateError as exc:
            log.warning("the team's published ReplyPath is not usable: %s", exc)
            return None

    def _route_read_done(self, template: ReplyTemplate | None) -> None:
        if template != self._published:
            self._published = template
            self._events.route_changed()


def mode_for(
    store: LocalStore, handoff: Handoff, events: InboxEvents, hand_over: HandOver
) -> ReplyMode:
    """The profile's mode: a team's server followed, or this console's own listener."""
    if store.team:
        return OfficeReceiver(store.replies, store.settings, handoff, events, hand_over)
    return OwnListener()
