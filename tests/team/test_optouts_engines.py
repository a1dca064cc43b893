"""The opt-out list on both engines: a customer's keyword changes it in the reply's own
transaction, an operator's change records who made it and an audit entry with it, and
another console sees every change."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gwdesk.domain.operator import default_operator
from gwdesk.domain.optout_words import Keywords
from gwdesk.store.database import StoreError, StoreUnavailable
from gwdesk.store.optouts import CUSTOMER, How, OptOutStore
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply, OptOutRules, ReplyStore
from gwdesk.store.shared import ServerData, SharedData
from gwdesk.store.team import Audit
from tests.postgres_server import PostgresServer
from tests.team.support import another, declaring

ACCOUNT = "ops@https://gw.example"
NUMBER = "61412345678"
T0 = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


@pytest.fixture
def optouts(shared: SharedData) -> Iterator[OptOutStore]:
    desk = declaring(shared, "Sam", "desk-2")
    store = OptOutStore(desk, ACCOUNT, operator="Sam", console="desk-2")
    yield store
    store.close()
    if desk is not shared:
        desk.close()


@pytest.fixture
def replies(shared: SharedData, tmp_path: Path) -> Iterator[ReplyStore]:
    rules = OptOutRules(ACCOUNT, Keywords())
    store = ReplyStore(shared, local=tmp_path / "profile.sqlite3", optouts=rules)
    yield store
    store.close()


def reply(text: str, at: datetime = T0, source: str = "webhook") -> IncomingReply:
    return IncomingReply(NUMBER, "61400000000", text, at, source=source)  # type: ignore[arg-type]


def audit_of(shared: SharedData) -> Audit:
    return Audit(shared.open())


def test_a_stop_stored_at_the_listener_opts_the_number_out_for_another_console(
    replies: ReplyStore, shared: SharedData
) -> None:
    [stored] = replies.add([reply("Stop please")])
    elsewhere = another(shared)
    listed = OptOutStore(elsewhere, ACCOUNT)
    found = listed.get(NUMBER)
    assert found is not None
    assert (found.opted_out, found.how, found.by, found.reply_id) == (
        True, How.REPLY, CUSTOMER, stored.reply.id,
    )  # fmt: skip
    assert listed.opted_out_numbers() == {NUMBER}
    listed.close()
    elsewhere.close()


def test_a_reply_is_not_stored_when_its_opt_out_change_cannot_be(
    replies: ReplyStore, shared: SharedData
) -> None:
    with shared.open().transaction() as session:
        session.execute("DROP TABLE optout_changes")
    with pytest.raises(StoreError):
        replies.add([reply("STOP")])
    assert replies.count() == 0  # one transaction: the reply went with the change


def test_keyword_rules_a_mention_changes_nothing_and_start_resubscribes(
    replies: ReplyStore, optouts: OptOutStore
) -> None:
    replies.add([reply("I did not say stop")])
    assert optouts.get(NUMBER) is None
    replies.add([reply("STOP", T0 + timedelta(minutes=1))])
    replies.add([reply("start", T0 + timedelta(minutes=2))])
    found = optouts.get(NUMBER)
    assert found is not None
    assert not found.opted_out
    assert found.keyword == "START"


def test_an_old_stop_arriving_late_is_kept_but_changes_nothing(
    replies: ReplyStore, optouts: OptOutStore
) -> None:
    replies.add([reply("START", T0 + timedelta(hours=1))])
    replies.add([reply("STOP", T0, source="backfill")])
    found = optouts.get(NUMBER)
    assert found is not None
    assert not found.opted_out
    assert [c.applied for c in optouts.history(NUMBER)] == [False, True]


def test_the_teams_own_keywords_are_the_ones_applied(
    shared: SharedData, tmp_path: Path, optouts: OptOutStore
) -> None:
    rules = OptOutRules(ACCOUNT, Keywords(("HALT",), ("RESUME",)))
    store = ReplyStore(shared, local=tmp_path / "profile.sqlite3", optouts=rules)
    store.add([reply("STOP")])
    assert optouts.get(NUMBER) is None
    store.add([reply("halt!", T0 + timedelta(seconds=5))])
    found = optouts.get(NUMBER)
    assert found is not None
    assert (found.opted_out, found.keyword) == (True, "HALT")
    store.close()


def test_an_operators_change_records_who_and_an_audit_entry(
    optouts: OptOutStore, shared: SharedData
) -> None:
    optouts.set(NUMBER, True, reason="asked by phone")
    optouts.set(NUMBER, False, reason="wrote in to resubscribe")
    found = optouts.get(NUMBER)
    assert found is not None
    assert (found.opted_out, found.by, found.how) == (False, "Sam", How.OPERATOR)
    entries = audit_of(shared).entries()
    assert [(e.operator, e.console, e.action, e.subject, e.detail) for e in entries] == [
        ("Sam", "desk-2", "opted out", NUMBER, "asked by phone"),
        ("Sam", "desk-2", "opted back in", NUMBER, "wrote in to resubscribe"),
    ]


def test_a_change_is_not_made_when_its_audit_entry_cannot_be(
    optouts: OptOutStore, shared: SharedData
) -> None:
    with shared.open().transaction() as session:
        session.execute("DROP TABLE audit")
    with pytest.raises(StoreError, match="cannot be changed"):
        optouts.set(NUMBER, True, reason="complaint")
    assert optouts.get(NUMBER) is None


def test_an_import_records_who_and_is_audited(optouts: OptOutStore, shared: SharedData) -> None:
    optouts.set("61400000001", True, reason="earlier")
    added = optouts.import_numbers(["61400000001", "61400000002", "61400000003"], reason="")
    assert added == 2
    found = optouts.get("61400000003")
    assert found is not None
    assert (found.by, found.how, found.reason) == ("Sam", How.IMPORT, "imported")
    entries = audit_of(shared).entries()
    if shared.kind == "sqlite":  # the file's store sums an import up in one entry
        assert [(e.action, e.subject) for e in entries[-1:]] == [
            ("imported opt-outs", "2 of 3 numbers newly opted out")
        ]
    else:  # a server audits each change it takes, as it takes it
        assert [(e.operator, e.action, e.subject) for e in entries[-3:]] == [
            ("Sam", "opted out (import) (no change)", "61400000001"),
            ("Sam", "opted out (import)", "61400000002"),
            ("Sam", "opted out (import)", "61400000003"),
        ]
    assert optouts.count() == (3, 0)


def test_a_named_operator_wins_and_no_operator_is_the_system_user(shared: SharedData) -> None:
    anonymous = OptOutStore(shared, ACCOUNT)
    anonymous.set("61400000001", True, reason="x")
    anonymous.set("61400000002", True, reason="y", by="Robin")
    first, second = anonymous.get("61400000001"), anonymous.get("61400000002")
    assert first is not None
    assert second is not None
    assert (first.by, second.by) == (default_operator(), "Robin")
    anonymous.close()


def test_the_listing_search_ignores_case_and_takes_wildcards_as_text(
    optouts: OptOutStore,
) -> None:
    optouts.set("61400000001", True, reason="Complaint: 100% SPAM_calls")
    optouts.set("61400000002", True, reason="complaint 1000 spam-calls")
    optouts.set("61400000003", True, reason="O'Brien said \\ no")
    assert [o.number for o in optouts.listing("100%")] == ["61400000001"]
    assert [o.number for o in optouts.listing("spam_")] == ["61400000001"]
    assert {o.number for o in optouts.listing("COMPLAINT")} == {"61400000001", "61400000002"}
    assert [o.number for o in optouts.listing("o'brien said \\")] == ["61400000003"]
    assert [o.number for o in optouts.listing("0000002")] == ["61400000002"]


def test_a_server_that_went_away_is_unavailable_not_an_empty_list(
    lone_postgres: PostgresServer,
) -> None:
    data = ServerData(PostgresDatabase(lone_postgres.create_database("team")))
    store = OptOutStore(data, ACCOUNT, operator="Sam")
    store.set(NUMBER, True, reason="complaint")
    lone_postgres.stop()
    with pytest.raises(StoreUnavailable, match="opt-out list cannot be read"):
        store.opted_out([NUMBER])
    lone_postgres.start()
    assert set(store.opted_out([NUMBER])) == {NUMBER}
    store.close()
    data.close()
