"""The conversations flow (`app/conversations.py`), Qt-free, on a profile's real file: two
operators of one workstation, each with their own read marks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import cast
from zoneinfo import ZoneInfo

import pytest

from gwdesk.app.conversations import ConversationsFlow, Showing, Snooze, snooze_until
from gwdesk.domain.errors import InputRefused
from gwdesk.store.conversations import ConversationStore
from gwdesk.store.local import LocalStore
from gwdesk.store.replies import IncomingReply

CUSTOMER = "61412345678"
OTHER = "61498765432"
T0 = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


@pytest.fixture
def desks(tmp_path: Path) -> Iterator[dict[str, ConversationsFlow]]:
    stores = {
        name: LocalStore(tmp_path / "profile.sqlite3", operator=name) for name in ("Alex", "Sam")
    }
    yield {name: ConversationsFlow(store.conversations) for name, store in stores.items()}
    for store in stores.values():
        store.close()


def receive(flow: ConversationsFlow, tmp_path: Path, sender: str, *texts: str) -> None:
    from gwdesk.store.replies import ReplyStore

    store = ReplyStore(tmp_path / "profile.sqlite3")
    try:
        store.add([IncomingReply(sender, "61400000000", t, T0 + timedelta(seconds=n))
                   for n, t in enumerate(texts)])  # fmt: skip
    finally:
        store.close()


def numbers(flow: ConversationsFlow, showing: Showing) -> list[str]:
    return [row.kept.number for row in flow.listing(showing).conversations]


def test_mine_shows_only_what_is_assigned_to_this_operator(
    desks: dict[str, ConversationsFlow], tmp_path: Path
) -> None:
    receive(desks["Alex"], tmp_path, CUSTOMER, "hi")
    receive(desks["Alex"], tmp_path, OTHER, "hello")
    desks["Alex"].assign("0412 345 678", "Sam")
    assert numbers(desks["Sam"], Showing.MINE) == [CUSTOMER]
    assert numbers(desks["Alex"], Showing.MINE) == []
    assert numbers(desks["Alex"], Showing.UNASSIGNED) == [OTHER]


def test_take_assigns_to_this_operator(desks: dict[str, ConversationsFlow]) -> None:
    assert desks["Alex"].take(CUSTOMER).assigned_to == "Alex"


def test_open_leaves_out_done_and_waiting(
    desks: dict[str, ConversationsFlow], tmp_path: Path
) -> None:
    receive(desks["Alex"], tmp_path, CUSTOMER, "hi")
    receive(desks["Alex"], tmp_path, OTHER, "hello")
    desks["Alex"].done(CUSTOMER)
    desks["Alex"].wait(OTHER)
    assert numbers(desks["Sam"], Showing.OPEN) == []
    desks["Sam"].reopen(OTHER)
    assert numbers(desks["Alex"], Showing.OPEN) == [OTHER]


def test_a_reply_reopens_a_done_conversation_for_both_operators(
    desks: dict[str, ConversationsFlow], tmp_path: Path
) -> None:
    receive(desks["Alex"], tmp_path, CUSTOMER, "hi")
    desks["Alex"].done(CUSTOMER)
    receive(desks["Alex"], tmp_path, CUSTOMER, "hi", "still there?")
    assert [numbers(d, Showing.OPEN) for d in desks.values()] == [[CUSTOMER], [CUSTOMER]]


def test_one_operator_reading_leaves_the_others_unread(
    desks: dict[str, ConversationsFlow], tmp_path: Path
) -> None:
    receive(desks["Alex"], tmp_path, CUSTOMER, "a", "b")
    desks["Alex"].mark_read(CUSTOMER)
    alex, sam = desks["Alex"].listing(), desks["Sam"].listing()
    assert (alex.unread_conversations, alex.unread_replies) == (0, 0)
    assert (sam.unread_conversations, sam.unread_replies) == (1, 2)


def test_mark_all_read_clears_every_conversation_for_this_operator(
    desks: dict[str, ConversationsFlow], tmp_path: Path
) -> None:
    receive(desks["Alex"], tmp_path, CUSTOMER, "a")
    receive(desks["Alex"], tmp_path, OTHER, "b")
    desks["Sam"].mark_all_read()
    assert desks["Sam"].listing().unread_replies == 0
    assert desks["Alex"].listing().unread_replies == 2


def test_snooze_until_a_time_to_come_and_it_reads_open_after(
    desks: dict[str, ConversationsFlow], tmp_path: Path
) -> None:
    receive(desks["Alex"], tmp_path, CUSTOMER, "a")
    until = datetime.now(UTC) + timedelta(hours=2)
    assert desks["Alex"].snooze(CUSTOMER, until).state == "snoozed"
    later = desks["Sam"].listing(Showing.OPEN, now=until + timedelta(minutes=1))
    assert [row.kept.number for row in later.conversations] == [CUSTOMER]


def test_a_snooze_in_the_past_is_refused_at_its_field(desks: dict[str, ConversationsFlow]) -> None:
    with pytest.raises(InputRefused) as refused:
        desks["Alex"].snooze(CUSTOMER, datetime.now(UTC) - timedelta(hours=1))
    assert refused.value.field == "until"


@pytest.mark.parametrize("typed", ["<script>", "0412\x1b[2J", "9" * 5000, ""])
def test_a_number_that_is_not_one_is_refused_at_its_field(
    desks: dict[str, ConversationsFlow], typed: str
) -> None:
    with pytest.raises(InputRefused) as refused:
        desks["Alex"].done(typed)
    assert refused.value.field == "number"


def test_an_operator_name_of_markup_is_kept_as_text(desks: dict[str, ConversationsFlow]) -> None:
    name = "<b>Sam</b> & co"
    assert desks["Alex"].assign(CUSTOMER, name).assigned_to == name


def test_state_reads_what_another_operator_changed(desks: dict[str, ConversationsFlow]) -> None:
    assert desks["Sam"].state(CUSTOMER).state == "open"
    desks["Alex"].done("0412 345 678")
    kept = desks["Sam"].state("+61412345678")
    assert (kept.state, kept.changed_by) == ("done", "Alex")


def test_state_of_a_number_that_is_not_one_is_refused_at_its_field(
    desks: dict[str, ConversationsFlow],
) -> None:
    with pytest.raises(InputRefused) as refused:
        desks["Alex"].state("<b>not a number</b>")
    assert refused.value.field == "number"


def test_snooze_until_tomorrow_is_nine_on_the_profiles_clock_across_a_clock_change() -> None:
    sydney = ZoneInfo("Australia/Sydney")
    # 23:30 on Saturday 4 April 2026 in Sydney (UTC+11); daylight saving ends overnight.
    now = datetime(2026, 4, 4, 12, 30, tzinfo=UTC)
    until = snooze_until(Snooze.TOMORROW, now, sydney)
    assert until.astimezone(sydney).replace(tzinfo=None) == datetime(2026, 4, 5, 9, 0)
    assert until.astimezone(UTC) == datetime(2026, 4, 4, 23, 0, tzinfo=UTC)  # now UTC+10


def test_snooze_for_an_hour_is_an_hour_from_now() -> None:
    now = datetime(2026, 4, 4, 12, 30, tzinfo=UTC)
    assert snooze_until(Snooze.HOUR, now, ZoneInfo("Australia/Perth")) == now + timedelta(hours=1)


def test_snooze_for_keeps_the_time_and_the_conversation_reads_snoozed(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "profile.sqlite3", operator="Alex")
    try:
        flow = ConversationsFlow(store.conversations, zone=ZoneInfo("Australia/Brisbane"))
        kept = flow.snooze_for(CUSTOMER, Snooze.TOMORROW)
        assert kept.state == "snoozed"
        assert kept.snoozed_until is not None
        assert kept.snoozed_until.astimezone(flow.zone).time() == time(9)
    finally:
        store.close()


def test_a_time_picked_on_the_profiles_clock_is_read_in_its_zone() -> None:
    flow = ConversationsFlow(cast(ConversationStore, None), zone=ZoneInfo("Australia/Perth"))
    picked = flow.on_my_clock(datetime(2026, 5, 1, 9, 0))
    assert picked.astimezone(UTC) == datetime(2026, 5, 1, 1, 0, tzinfo=UTC)


def test_the_operators_to_assign_to_are_those_the_conversations_named_and_me(
    desks: dict[str, ConversationsFlow],
) -> None:
    desks["Sam"].done(CUSTOMER)
    desks["Alex"].assign(OTHER, "<b>Lee</b>")
    assert desks["Alex"].operators() == ["<b>Lee</b>", "Alex", "Sam"]
