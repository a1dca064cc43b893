"""The opt-out list: keyword replies change it as they are stored, once; operators with a reason."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.domain.optout_words import Keywords
from gwdesk.store.database import StoreError
from gwdesk.store.optouts import How, OptOutError, OptOutStore
from gwdesk.store.replies import IncomingReply, OptOutRules, ReplyStore

ACCOUNT = "ops@https://gw.example"
CUSTOMER = "61412345678"
T0 = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "profile.sqlite3"


@pytest.fixture
def replies(path: Path) -> ReplyStore:
    store = ReplyStore(path, optouts=OptOutRules(ACCOUNT, Keywords()))
    yield store
    store.close()


@pytest.fixture
def optouts(path: Path, replies: ReplyStore) -> OptOutStore:
    store = OptOutStore(path, ACCOUNT)
    yield store
    store.close()


def reply(
    text: str, at: datetime = T0, source: str = "webhook", number: str = CUSTOMER
) -> IncomingReply:
    return IncomingReply(number, "61400000000", text, at, source=source)  # type: ignore[arg-type]


def test_a_stop_reply_opts_the_number_out(replies: ReplyStore, optouts: OptOutStore) -> None:
    replies.add([reply("Stop!")])
    found = optouts.get(CUSTOMER)
    assert found is not None
    assert found.opted_out
    assert found.how is How.REPLY
    assert found.keyword == "STOP"
    assert found.describe().startswith("opted out by replying STOP on 3 Mar 2026")


def test_the_same_stop_arriving_twice_is_one_change(
    replies: ReplyStore, optouts: OptOutStore
) -> None:
    replies.add([reply("STOP")])
    replies.add([reply("STOP", source="backfill")])
    replies.add([reply("STOP"), reply("STOP")])
    assert len(optouts.history(CUSTOMER)) == 1


def test_start_opts_back_in(replies: ReplyStore, optouts: OptOutStore) -> None:
    replies.add([reply("STOP")])
    replies.add([reply("start", at=T0 + timedelta(minutes=5))])
    found = optouts.get(CUSTOMER)
    assert found is not None
    assert not found.opted_out
    assert optouts.opted_out_numbers() == frozenset()


def test_an_old_stop_arriving_late_does_not_undo_a_later_start(
    replies: ReplyStore, optouts: OptOutStore
) -> None:
    replies.add([reply("START", at=T0 + timedelta(minutes=5))])
    replies.add([reply("STOP", at=T0, source="backfill")])
    found = optouts.get(CUSTOMER)
    assert found is not None
    assert not found.opted_out
    assert [c.applied for c in optouts.history(CUSTOMER)] == [False, True]


def test_a_mention_changes_nothing(replies: ReplyStore, optouts: OptOutStore) -> None:
    replies.add([reply("Please don't stop my order")])
    assert optouts.get(CUSTOMER) is None


def test_a_national_sender_is_listed_as_the_gateway_writes_it(
    replies: ReplyStore, optouts: OptOutStore
) -> None:
    replies.add([reply("STOP", number="+61 412 345 678")])
    assert optouts.opted_out([CUSTOMER]).keys() == {CUSTOMER}


def test_without_rules_the_list_is_not_kept(path: Path) -> None:
    store = ReplyStore(path)
    store.add([reply("STOP")])
    store.close()
    listed = OptOutStore(path, ACCOUNT)
    assert listed.get(CUSTOMER) is None
    listed.close()


def test_another_account_has_its_own_list(path: Path, replies: ReplyStore) -> None:
    replies.add([reply("STOP")])
    other = OptOutStore(path, "someone@else")
    assert other.get(CUSTOMER) is None
    other.close()


def test_an_operator_resubscription_needs_a_reason(
    replies: ReplyStore, optouts: OptOutStore
) -> None:
    replies.add([reply("STOP")])
    with pytest.raises(OptOutError):
        optouts.set(CUSTOMER, False, reason="  ")
    found = optouts.set(CUSTOMER, False, reason="asked by phone", by="alex")
    assert (found.opted_out, found.how, found.by, found.reason) == (
        False, How.OPERATOR, "alex", "asked by phone"
    )  # fmt: skip
    assert isinstance(OptOutError("x"), StoreError)


def test_an_operator_can_opt_a_number_out_by_hand(optouts: OptOutStore) -> None:
    found = optouts.set(CUSTOMER, True, reason="complaint by email", by="sam")
    assert found.opted_out
    assert "by sam" in found.describe()
    assert "complaint by email" in found.describe()


def test_an_import_opts_out_each_number_once(optouts: OptOutStore) -> None:
    assert optouts.import_numbers([CUSTOMER, "61412000001", CUSTOMER], reason="old list") == 2
    assert optouts.import_numbers([CUSTOMER], reason="again") == 0
    assert optouts.count() == (2, 0)
    assert {o.number for o in optouts.listing()} == {CUSTOMER, "61412000001"}


def test_listing_searches_numbers_and_reasons(optouts: OptOutStore) -> None:
    optouts.set(CUSTOMER, True, reason="complaint by email")
    optouts.set("61412000001", True, reason="wrong number")
    assert [o.number for o in optouts.listing("2345")] == [CUSTOMER]
    assert [o.number for o in optouts.listing("wrong")] == ["61412000001"]


def test_the_history_keeps_every_change_in_order(replies: ReplyStore, optouts: OptOutStore) -> None:
    replies.add([reply("STOP")])
    optouts.set(CUSTOMER, False, reason="asked by phone")
    replies.add([reply("stop please", at=datetime.now(UTC) + timedelta(minutes=1))])
    assert [(c.opted_out, c.how) for c in optouts.history(CUSTOMER)] == [
        (True, How.REPLY), (False, How.OPERATOR), (True, How.REPLY)
    ]  # fmt: skip


def test_a_profile_s_own_keywords_decide_what_opts_out(tmp_path: Path) -> None:
    from gwdesk.domain.settings import OPT_OUT_KEYWORDS
    from gwdesk.store.local import LocalStore

    store = LocalStore(tmp_path / "p.sqlite3", ACCOUNT)
    try:
        store.settings.set(OPT_OUT_KEYWORDS, ("HALT",))
        store.apply_optout_keywords()
        store.replies.add([reply("STOP")])
        assert store.optouts.get(CUSTOMER) is None
        store.replies.add([reply("halt!", at=T0 + timedelta(minutes=1))])
        found = store.optouts.get(CUSTOMER)
        assert found is not None
        assert found.keyword == "HALT"
    finally:
        store.close()


def test_a_store_opened_without_an_account_changes_no_list(tmp_path: Path) -> None:
    from gwdesk.store.local import LocalStore

    store = LocalStore(tmp_path / "p.sqlite3")
    try:
        store.replies.add([reply("STOP")])
        assert OptOutStore(tmp_path / "p.sqlite3", ACCOUNT).get(CUSTOMER) is None
    finally:
        store.close()
