"""Replies tab: replies posted to the real listener appear in the table, live and in batches."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from itertools import pairwise

from pytestqt.qtbot import QtBot

from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.replies.notifier import GATHER_MS, Notice
from gwdesk.ui.replies.table import FROM, MESSAGE, Applied
from gwdesk.ui.reply_hub import DRAIN_MS
from gwdesk.ui.reply_state import ReplyDelivery
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.conversations_support import fresh_listing
from tests.ui.replies_support import (
    CUSTOMER,
    Flood,
    post_raw,
    post_reply,
    record_deliveries,
    replies_tab,
)


def texts(tab) -> list[str]:  # type: ignore[no-untyped-def]
    model = tab.model
    return [model.row(n).text for n in range(model.total) if model.row(n) is not None]


async def test_a_reply_posted_to_the_listener_appears_in_the_table_and_the_unread_count(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None

    answer = await post_reply(template, text="Yes, Friday 10:30 works")

    assert (answer.status_code, answer.text) == (200, "OK")
    await wait_until(lambda: tab.model is not None and tab.model.total == 1)
    model = tab.model
    assert model.index(0, MESSAGE).data() == "Yes, Friday 10:30 works"
    assert model.index(0, FROM).data() == "+61 412 345 678"
    await wait_until(lambda: ui.session.replies.unread == 1)
    await fresh_listing(tab.conversations)  # the title counts this operator's unread
    assert tab.display_title == "Replies (1)"
    assert "1 unread" in tab.count_label.text()


async def test_a_flood_arrives_in_batches_and_every_reply_is_shown(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    deliveries = record_deliveries(ui.session.replies)

    started = time.monotonic()
    flood = Flood(template, 2000).start()
    await wait_until(lambda: flood.done and tab.model.total == 2000, 60, "2,000 replies shown")
    drains = (time.monotonic() - started) / (DRAIN_MS / 1000) + 2

    assert flood.statuses == [200] * 2000
    assert deliveries.new == 2000
    # One signal per 100 ms drain at most, not one per reply, however fast the flood came.
    assert len(deliveries.batches) <= drains < 2000
    assert ui.session.replies.unread == 2000
    await fresh_listing(tab.conversations)  # the title counts this operator's unread
    assert tab.display_title == "Replies (2,000)"
    shown = texts(tab)
    assert len(shown) == 2000
    assert set(shown) == {f"flood {n}" for n in range(2000)}


async def test_a_reply_the_gateway_retries_is_shown_once(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    when = datetime.now(UTC)
    for _ in range(3):  # the first answer "lost", so the gateway calls again
        answer = await post_reply(template, text="STOP", received=when)
        assert answer.text == "OK"
    await post_reply(template, text="after", received=when + timedelta(seconds=1))

    await wait_until(lambda: tab.model.total == 2)
    assert texts(tab) == ["STOP", "after"]
    assert ui.session.replies.unread == 2


async def test_a_delivery_of_the_newest_reply_already_read_is_not_shown_twice(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    """A tab made just after a reply was stored reads it, then the hub's drain hands
    the same reply over: it stays one row."""
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="only once")
    await wait_until(lambda: tab.model.total == 1)
    store = ui.session.store
    assert store is not None
    (stored,) = store.replies.latest()
    assert tab.model.apply(ReplyDelivery((stored,))) is Applied.NOTHING
    assert tab.model.total == 1
    assert texts(tab) == ["only once"]


async def test_a_search_shows_only_matching_replies_by_text_or_number(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    now = datetime.now(UTC)
    await post_reply(template, text="Yes please", sender=CUSTOMER, received=now)
    await post_reply(template, text="No thanks", sender="61498765432", received=now)
    await post_reply(template, text="YES!", sender="61487654321", received=now)
    await wait_until(lambda: tab.model.total == 3)

    tab.search_edit.setText("yes")
    await wait_until(lambda: tab.model.search.needle == "yes" and not tab.model.pending)
    assert sorted(texts(tab)) == ["YES!", "Yes please"]
    assert tab.count_label.text().startswith("2 matching")

    tab.search_edit.setText("0498 765")  # a national number as people type it
    await wait_until(lambda: tab.model.search.needle == "0498 765" and not tab.model.pending)
    assert texts(tab) == ["No thanks"]

    await post_reply(template, text="Thanks again", sender="61498765432", received=now)
    await post_reply(template, text="yes from someone else", sender="61411111111")
    await wait_until(lambda: tab.model.total == 2)  # only the matching one was added live
    assert texts(tab) == ["No thanks", "Thanks again"]

    tab.search_edit.clear()
    tab.apply_search()
    await wait_until(lambda: not tab.model.search.active and not tab.model.pending)
    assert tab.model.total == 5


async def test_a_search_that_matches_nothing_says_so(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Yes")
    await wait_until(lambda: tab.model.total == 1)
    tab.search_edit.setText("zebra")
    tab.apply_search()
    await wait_until(lambda: not tab.model.pending and tab.model.total == 0)
    assert tab.table_stack.currentWidget() is tab.empty_label
    assert tab.empty_label.text() == "No replies match the search."


async def test_malformed_calls_are_refused_and_leave_the_view_as_it_was(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="Before")
    await wait_until(lambda: tab.model.total == 1)
    deliveries = record_deliveries(ui.session.replies)
    base = template.base_url
    hostile = [
        await post_raw(f"{base}?from=61412345678&to=1&msg=x&rcvd=not-a-time"),
        await post_raw(f"{base}?from=61412345678&msg=no-to&rcvd=05-Jan-2024%2014:04:07"),
        await post_raw(base, "POST", content=b"\xff\xfe\x00garbage", headers={"Content-Type": "application/x-www-form-urlencoded"}),
        await post_raw(base, "POST", content=b"x" * 100_000, headers={"Content-Type": "application/x-www-form-urlencoded"}),
        await post_raw(base.replace(template.secret, "wrong-secret-0123456789") + "?from=1"),
        await post_raw(base, "POST", content=b"{not json", headers={"Content-Type": "application/json"}),
    ]  # fmt: skip
    await post_reply(template, text="After")
    await wait_until(lambda: tab.model.total == 2)

    assert all(400 <= r.status_code < 500 for r in hostile), [r.status_code for r in hostile]
    assert texts(tab) == ["Before", "After"]
    assert deliveries.new == 1
    assert ui.session.replies.unread == 2
    assert tab.listener_label.isHidden()
    assert ui.session.replies.listening


async def test_showing_the_tab_in_the_active_window_marks_the_replies_seen(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    await post_reply(template, text="One")
    await post_reply(template, text="Two")
    await wait_until(lambda: ui.session.replies.unread == 2)

    tab.show()
    tab.activateWindow()
    await wait_until(lambda: tab.watching())
    await wait_until(lambda: ui.session.replies.unread == 0)
    await fresh_listing(tab.conversations)
    assert tab.display_title == "Replies (2)"  # seen is not read: the operator's own count
    store = ui.session.store
    assert store is not None
    await wait_until(lambda: store.replies.unseen_count() == 0)  # kept for the next start


async def test_the_view_follows_new_replies_only_when_already_at_the_newest(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    tab.resize(1000, 400)
    tab.show()
    template = ui.session.replies.template
    assert template is not None
    flood = Flood(template, 300).start()
    await wait_until(lambda: flood.done and tab.model.total == 300, 30)
    await wait_until(lambda: tab.at_newest())  # it followed the flood down

    tab.table.scrollToTop()  # the operator goes back to read an older reply
    top_before = tab.table.rowAt(0)
    await post_reply(template, text="while reading")
    await wait_until(lambda: tab.model.total == 301)
    assert tab.table.rowAt(0) == top_before
    assert not tab.at_newest()

    tab.table.scrollToBottom()
    await post_reply(template, text="at the newest")
    await wait_until(lambda: tab.model.total == 302)
    await wait_until(lambda: tab.at_newest())
    last = tab.model.row(301)
    assert last is not None
    assert last.text == "at the newest"


async def test_a_reply_received_earlier_than_those_shown_takes_its_place_in_time_order(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    now = datetime.now(UTC)
    await post_reply(template, text="newer", received=now)
    await wait_until(lambda: tab.model.total == 1)
    await post_reply(template, text="older, retried late", received=now - timedelta(minutes=5))

    await wait_until(lambda: tab.model.total == 2 and not tab.model.pending)
    assert texts(tab) == ["older, retried late", "newer"]


async def test_notifications_name_a_single_reply_and_gather_a_flood(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await replies_tab(ui, qtbot, sandbox)
    template = ui.session.replies.template
    assert template is not None
    notices: list[Notice] = []
    told_at: list[float] = []
    tab.notifier.notified.connect(notices.append)
    tab.notifier.notified.connect(lambda _notice: told_at.append(time.monotonic()))

    await post_reply(template, text="Running late, sorry")
    await wait_until(lambda: len(notices) == 1)
    assert notices[0].title == "Reply from +61 412 345 678"
    assert notices[0].body == "Running late, sorry"

    flood = Flood(template, 500).start()
    await wait_until(lambda: flood.done and tab.model.total == 501, 30)
    tab.notifier.flush()  # what the gathering timer would show a moment later
    assert sum(n.count for n in notices) == 501
    gaps = [later - earlier for earlier, later in pairwise(told_at[:-1])]
    # one notice a gathering window at most, however long the flood took to arrive (a
    # coarse timer may fire up to 5% early); the last was flushed by hand
    assert all(gap >= 0.9 * GATHER_MS / 1000 for gap in gaps), gaps
    assert notices[-1].title.endswith(" new replies")
