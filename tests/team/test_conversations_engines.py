"""Conversations as work on both engines: a profile's file and a team's server (logged in
as its owner here; the operators' own logins are `test_team_conversation_rules.py`'s)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.store.conversations import ConversationError, ConversationStore
from gwdesk.store.replies import IncomingReply, ReplyStore
from gwdesk.store.shared import SharedData
from gwdesk.store.team import Audit

CUSTOMER = "61412345678"
T0 = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


@pytest.fixture
def replies(shared: SharedData, tmp_path: Path) -> Iterator[ReplyStore]:
    store = ReplyStore(shared, local=tmp_path / "own.sqlite3")
    yield store
    store.close()


@pytest.fixture
def desk(shared: SharedData) -> Iterator[ConversationStore]:
    database = shared.open()
    yield ConversationStore(database, operator="Alex", console="desk-a")
    database.close()


def reply(text: str, seconds: int = 0, sender: str = CUSTOMER) -> IncomingReply:
    return IncomingReply(sender, "61400000000", text, T0 + timedelta(seconds=seconds))


def test_a_number_nobody_changed_is_open_and_nobodys(desk: ConversationStore) -> None:
    kept = desk.get(CUSTOMER)
    assert (kept.state, kept.assigned_to) == ("open", None)


def test_a_new_reply_reopens_a_done_conversation_and_says_who(
    desk: ConversationStore, replies: ReplyStore
) -> None:
    replies.add([reply("thanks")])
    assert desk.set_state(CUSTOMER, "done").state == "done"
    replies.add([reply("one more thing", 5)])
    kept = desk.get(CUSTOMER)
    assert (kept.state, kept.changed_by) == ("open", "the customer")
    actions = [e.action for e in Audit(desk.database).entries()]
    assert actions[-2:] == ["conversation done", "conversation reopened"]


def test_a_copy_of_a_reply_already_stored_reopens_nothing(
    desk: ConversationStore, replies: ReplyStore
) -> None:
    replies.add([reply("thanks")])
    desk.set_state(CUSTOMER, "waiting")
    replies.add([reply("thanks")])  # the gateway's retry of the same reply
    assert desk.get(CUSTOMER).state == "waiting"


def test_a_reply_from_another_number_leaves_the_conversation_done(
    desk: ConversationStore, replies: ReplyStore
) -> None:
    desk.set_state(CUSTOMER, "done")
    replies.add([reply("hello", sender="61499999999")])
    assert desk.get(CUSTOMER).state == "done"


def test_a_reply_stored_with_a_plus_reopens_the_same_conversation(
    desk: ConversationStore, replies: ReplyStore
) -> None:
    desk.set_state(CUSTOMER, "done")
    replies.add([reply("hi", sender=f"+{CUSTOMER}")])
    assert desk.get(CUSTOMER).state == "open"


def test_a_snooze_whose_time_has_passed_reads_as_open(desk: ConversationStore) -> None:
    until = datetime.now(UTC) + timedelta(hours=1)
    assert desk.set_state(CUSTOMER, "snoozed", until=until).state == "snoozed"
    assert desk.get(CUSTOMER, now=until + timedelta(seconds=1)).state == "open"


def test_a_snooze_in_the_past_is_refused(desk: ConversationStore) -> None:
    with pytest.raises(ConversationError):
        desk.set_state(CUSTOMER, "snoozed", until=datetime.now(UTC) - timedelta(minutes=1))


def test_a_state_it_does_not_know_is_refused(desk: ConversationStore) -> None:
    with pytest.raises(ConversationError):
        desk.set_state(CUSTOMER, "<b>closed</b>")


def test_an_assignment_is_kept_audited_and_taken_back(desk: ConversationStore) -> None:
    assert desk.assign(CUSTOMER, "Sam").assigned_to == "Sam"
    assert desk.assign(CUSTOMER, None).assigned_to is None
    actions = [e.action for e in Audit(desk.database).entries()]
    assert actions[-2:] == ["conversation assigned", "conversation unassigned"]


def test_an_operators_name_with_control_codes_is_kept_as_plain_text(
    desk: ConversationStore,
) -> None:
    kept = desk.assign(CUSTOMER, "Sam\x1b[31m\u202eX")
    assert kept.assigned_to is not None
    assert not any(c in kept.assigned_to for c in "\x1b\u202e")


def test_reading_a_conversation_clears_its_unread_for_this_reader(
    desk: ConversationStore, replies: ReplyStore
) -> None:
    replies.add([reply("a"), reply("b", 1), reply("c", 2, sender="61499999999")])
    assert desk.unread() == (2, 3)
    desk.mark_read(CUSTOMER)
    assert desk.unread() == (1, 1)
    [other, mine] = desk.listing()
    assert (other.kept.number, other.unread, mine.unread) == ("61499999999", 1, 0)


def test_mark_all_read_leaves_only_replies_that_come_after(
    desk: ConversationStore, replies: ReplyStore
) -> None:
    replies.add([reply("a"), reply("b", 1, sender="61499999999")])
    desk.mark_all_read()
    assert desk.unread() == (0, 0)
    replies.add([reply("c", 2)])
    assert desk.unread() == (1, 1)


def test_a_read_mark_never_goes_back(desk: ConversationStore, replies: ReplyStore) -> None:
    replies.add([reply("a"), reply("b", 1)])
    desk.mark_read(CUSTOMER)
    desk.mark_read(CUSTOMER, up_to=0)
    assert desk.unread() == (0, 0)


def test_a_reply_whose_time_cannot_be_read_is_listed_not_an_error(
    desk: ConversationStore,
) -> None:
    """A reply row another tool left with a time no desk can read (on a server only its
    superuser can, its check dropped: tests/ui/team/test_team_notices.py does that): its
    conversation is still listed, with no time, and the listing goes on."""
    if desk.database.kind != "sqlite":
        pytest.skip("the server refuses the row: its superuser's case is tested elsewhere")
    with desk.database.transaction() as session:
        session.execute(
            "INSERT INTO replies(from_number, to_number, text, received_at, source, stored_at) "
            "VALUES ('61412000777', '614', 'garbled', 'not-a-time', 'webhook', 'not-a-time')"
        )
    [row] = [r for r in desk.listing() if r.kept.number == "61412000777"]
    assert row.last_received is None


def test_a_conversation_read_names_its_tags_in_the_order_they_were_added(
    desk: ConversationStore,
) -> None:
    desk.tag(CUSTOMER, "refund")
    desk.tag(CUSTOMER, "vip")
    desk.tag(CUSTOMER, "refund")  # kept once
    assert desk.get(CUSTOMER).tags == ("refund", "vip")
