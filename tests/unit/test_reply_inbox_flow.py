"""The reply inbox's decisions without Qt (`gwdesk.app.reply_inbox`): a reply on each kind of
profile, unread counting across a restart, a team's server away, an unreadable reply,
and where two-way sends route replies."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from gwdesk.app.reply_inbox import ReplyInboxFlow
from gwdesk.app.reply_state import (
    LISTENER_OFF,
    NO_TEAM_ROUTE,
    BackfillReport,
    ListenerState,
    ListenerStatus,
    ReplyDelivery,
)
from gwdesk.domain.settings import TEAM_REPLY_PATH
from gwdesk.domain.webhook_time import format_webhook_time
from gwdesk.replies import ReplyTemplate
from gwdesk.store.database import StoreUnavailable
from gwdesk.store.local import LocalStore
from gwdesk.store.reader import Reading
from gwdesk.store.replies import IncomingReply
from gwdesk.store.shared import FileData
from tests.unit.handoff_support import LoopHandoff

SYDNEY = ZoneInfo("Australia/Sydney")
CUSTOMER = "61412345678"
OURS = "61400000000"
PUBLISHED = ReplyTemplate("replies.example.org", 443, "s" * 32, scheme="https")


@dataclass
class Told:
    """Everything the flow told (`InboxEvents`), in order."""

    statuses: list[ListenerStatus] = field(default_factory=list)
    deliveries: list[ReplyDelivery] = field(default_factory=list)
    unread: list[int] = field(default_factory=list)
    backfills: list[BackfillReport] = field(default_factory=list)
    routes: int = 0
    unreadable: list[int] = field(default_factory=list)
    activities: list[tuple[str, bool]] = field(default_factory=list)

    def status_changed(self, status: ListenerStatus) -> None:
        self.statuses.append(status)

    def replies_arrived(self, delivery: ReplyDelivery) -> None:
        self.deliveries.append(delivery)

    def unread_changed(self, unread: int) -> None:
        self.unread.append(unread)

    def backfill_finished(self, report: BackfillReport) -> None:
        self.backfills.append(report)

    def route_changed(self) -> None:
        self.routes += 1

    def unreadable_passed(self, count: int) -> None:
        self.unreadable.append(count)

    def activity(self, what: str, ok: bool) -> None:
        self.activities.append((what, ok))

    def texts(self) -> list[str]:
        return [reply.text for delivery in self.deliveries for reply in delivery.new]


class FailingReads(LoopHandoff):
    """A hand-off whose store reads fail while `away` (the team's server gone), and whose
    unread counts wait for `counts_go` while it is given."""

    away = False
    counts_go: asyncio.Event | None = None

    async def read(self, read: Callable[[Reading], Any], *, key: str | None = None) -> Any:
        if key == "unread" and self.counts_go is not None:
            await self.counts_go.wait()
        if self.away:
            raise StoreUnavailable("the team's server does not answer")
        return await super().read(read, key=key)


@dataclass
class Desk:
    store: LocalStore
    flow: ReplyInboxFlow
    told: Told
    handoff: FailingReads

    async def settled(self) -> None:
        await self.handoff.idle()


def incoming(text: str, seconds: int = 0) -> IncomingReply:
    at = datetime(2026, 3, 3, 9, 0, tzinfo=UTC) + timedelta(seconds=seconds)
    return IncomingReply(CUSTOMER, OURS, text, at)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Callable[..., LocalStore]]:
    opened: list[LocalStore] = []

    def open_store(name: str = "profile", *, team: bool = False) -> LocalStore:
        shared = FileData(tmp_path / "office.sqlite3") if team else None
        store = LocalStore(tmp_path / f"{name}.sqlite3", "demo", shared=shared)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture
async def desks() -> AsyncIterator[Callable[..., Desk]]:
    made: list[Desk] = []

    def open_desk(
        store: LocalStore, *, away: bool = False, counts_go: asyncio.Event | None = None
    ) -> Desk:
        """A flow opened on `store` (`away`: its server not answering reads yet;
        `counts_go`: its unread counts held until set)."""
        told = Told()
        handoff = FailingReads(store.path, store.shared)
        handoff.away = away
        handoff.counts_go = counts_go
        flow = ReplyInboxFlow(store, SYDNEY, None, handoff, told)
        flow.open()
        desk = Desk(store, flow, told, handoff)
        made.append(desk)
        return desk

    yield open_desk
    for desk in made:
        await desk.flow.shutdown()


async def post_reply(template: ReplyTemplate, text: str) -> None:
    moment = datetime.now(UTC)
    values = {
        "FROM": CUSTOMER,
        "TO": OURS,
        "MSG": text,
        "SENTDTS": format_webhook_time(moment - timedelta(seconds=2), SYDNEY),
        "RCVDDTS": format_webhook_time(moment, SYDNEY),
    }
    response = await asyncio.to_thread(httpx.get, template.fill(values), timeout=10)
    assert response.status_code == 200, response.text


async def drained(desk: Desk, count: int) -> None:
    """Drain as the console's timer does until `count` replies were handed over."""
    deadline = asyncio.get_running_loop().time() + 10
    while len(desk.told.texts()) < count:
        assert asyncio.get_running_loop().time() < deadline, desk.told.texts()
        desk.flow.drain()
        await asyncio.sleep(0.01)


# ---- a reply on each kind of profile ----------------------------------------------------------


async def test_a_reply_to_a_one_desk_listener_is_handed_to_the_views_once_and_counted_unread(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    desk = desks(stores())
    await desk.settled()
    status = await desk.flow.start(0)
    assert status.state is ListenerState.LISTENING, status
    template = desk.flow.template
    assert template is not None

    await post_reply(template, "Yes please")
    await drained(desk, 1)

    assert desk.told.texts() == ["Yes please"]
    assert desk.flow.unread == 1
    desk.flow.tables_changed(frozenset({"*"}))  # no server to follow: nothing read again
    await desk.settled()
    assert desk.told.texts() == ["Yes please"]


async def test_a_reply_another_desk_stored_reaches_a_team_desk_on_the_next_change(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    desk = desks(stores(team=True))
    other = stores("other", team=True)
    await desk.settled()

    other.replies.add([incoming("Yes please")])
    assert desk.told.texts() == []  # nobody said anything changed yet
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()

    assert desk.told.texts() == ["Yes please"]
    assert desk.flow.unread == 1
    assert desk.flow.latest_id == desk.told.deliveries[0].new[0].id


async def test_a_team_desks_own_listener_hands_its_replies_over_from_the_server_once(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    desk = desks(stores(team=True))
    await desk.settled()
    await desk.flow.start(0)
    assert desk.flow.status.state is ListenerState.LISTENING
    assert desk.flow.template is None  # a team routes to the office's receiver, not here
    assert desk.flow.inbox is not None

    desk.flow.inbox.add([incoming("stored here")])
    desk.flow.drain()
    assert desk.told.texts() == []  # not from this console's feed...
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()
    assert desk.told.texts() == ["stored here"]  # ...but from the server's, in its order


# ---- unread ------------------------------------------------------------------------------------


async def test_unread_replies_are_counted_again_after_a_restart_from_the_seen_watermark(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    store = stores()
    store.replies.add([incoming("one", 0), incoming("two", 1), incoming("three", 2)])
    first = desks(store)
    await first.settled()
    assert first.flow.unread == 3
    second_id = sorted(r.id for r in store.replies.after(0, 10))[1]

    first.flow.mark_seen(second_id)
    await first.settled()
    assert first.flow.unread == 1
    await first.flow.shutdown()

    again = desks(store)
    await again.settled()
    assert again.flow.unread == 1
    again.flow.mark_seen()
    assert again.flow.unread == 0


async def test_a_reply_handed_over_while_the_count_is_read_counts_once(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    counts_go = asyncio.Event()
    desk = desks(stores(), counts_go=counts_go)  # its count waits
    await desk.flow.start(0)
    assert desk.flow.inbox is not None
    desk.flow.inbox.add([incoming("meanwhile")])
    await drained(desk, 1)
    assert desk.flow.unread == 1

    counts_go.set()  # the count now sees the reply it was handed meanwhile, too
    await desk.settled()

    assert desk.flow.unread == 1


async def test_a_reply_stored_as_a_team_desk_opens_counts_once_whichever_is_read_first(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    store = stores(team=True)
    other = stores("other", team=True)
    store.replies.add([incoming("before")])
    desk = desks(store)  # its count is under way: it may see the next reply, or not
    other.replies.add([incoming("meanwhile", 5)])
    await desk.settled()
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()

    assert desk.flow.unread == 2


# ---- a team's server away ----------------------------------------------------------------------


async def test_a_read_of_the_teams_replies_that_fails_is_made_again_on_the_next_change(
    stores: Callable[..., LocalStore],
    desks: Callable[..., Desk],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = stores(team=True)
    other = stores("other", team=True)
    desk = desks(store)
    await desk.settled()
    reading = store.replies.page_after
    away = True

    def page_after(last_id: int, limit: int = 1000) -> Any:
        if away:
            raise StoreUnavailable("the team's server does not answer")
        return reading(last_id, limit)

    monkeypatch.setattr(store.replies, "page_after", page_after)
    other.replies.add([incoming("first")])
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()
    assert desk.told.texts() == []
    assert desk.handoff.rereads_made[0].failures == 1

    away = False
    other.replies.add([incoming("second", 1)])
    desk.flow.tables_changed(frozenset({"*"}))  # the server is back: a reconnection
    await desk.settled()
    assert desk.told.texts() == ["first", "second"]


async def test_a_first_count_that_failed_is_made_again_on_the_next_change_and_replies_follow(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    store = stores(team=True)
    other = stores("other", team=True)
    desk = desks(store, away=True)
    await desk.settled()
    other.replies.add([incoming("while away")])

    desk.handoff.away = False
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()
    other.replies.add([incoming("after", 1)])
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()

    assert desk.flow.unread == 2  # the one stored while away is counted, not shown twice
    assert desk.told.texts() == ["after"]


# ---- an unreadable reply -----------------------------------------------------------------------


def a_reply_no_desk_can_read(office: Path) -> None:
    with sqlite3.connect(office) as conn:
        conn.execute(
            "INSERT INTO replies(from_number, to_number, text, received_at, source, stored_at) "
            "VALUES ('61400000005', '614', 'garbled', 'not-a-time', 'webhook', 'not-a-time')"
        )
    conn.close()


async def test_an_unreadable_reply_is_passed_over_told_once_and_the_next_one_shows(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk], tmp_path: Path
) -> None:
    store = stores(team=True)
    other = stores("other", team=True)
    desk = desks(store)
    await desk.settled()

    a_reply_no_desk_can_read(tmp_path / "office.sqlite3")
    other.replies.add([incoming("after")])
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()
    other.replies.add([incoming("later", 1)])
    desk.flow.tables_changed(frozenset({"replies"}))
    await desk.settled()

    assert desk.told.texts() == ["after", "later"]
    assert desk.told.unreadable == [1]
    assert desk.flow.unreadable == 1


# ---- where two-way sends route replies ---------------------------------------------------------


async def test_a_one_desk_profile_routes_replies_to_its_listener_while_it_listens(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    desk = desks(stores())
    await desk.settled()
    assert (desk.flow.template, desk.flow.route_problem) == (None, LISTENER_OFF)

    await desk.flow.start(0)
    assert desk.flow.template is not None
    assert desk.flow.route_problem == ""
    await desk.flow.stop()
    assert desk.flow.route_problem == LISTENER_OFF
    assert desk.flow.status == ListenerStatus(ListenerState.STOPPED)


async def test_a_team_routes_replies_to_the_receivers_published_replypath_read_on_change(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    store = stores(team=True)
    desk = desks(store)
    await desk.settled()
    assert desk.flow.team_route
    assert (desk.flow.template, desk.flow.route_problem) == (None, NO_TEAM_ROUTE)
    assert desk.flow.status == ListenerStatus(ListenerState.STOPPED, team=True)

    stores("receiver", team=True).settings.set(TEAM_REPLY_PATH, PUBLISHED.render())
    routes = desk.told.routes
    desk.flow.tables_changed(frozenset({"settings"}))
    await desk.settled()

    assert desk.flow.template == PUBLISHED
    assert desk.flow.route_problem == ""
    assert desk.told.routes == routes + 1


async def test_a_team_desks_listener_does_not_start_with_the_session(
    stores: Callable[..., LocalStore], desks: Callable[..., Desk]
) -> None:
    desk = desks(stores(team=True))
    await desk.settled()

    await desk.flow.autostart()

    assert desk.flow.status.state is ListenerState.STOPPED
    assert desk.flow.inbox is not None  # running for a back-fill
