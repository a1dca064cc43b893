"""Presence, typing claims and the audit log, on both engines."""

from __future__ import annotations

import time

from gwdesk.store.engine import Database
from gwdesk.store.optouts import OptOutStore
from gwdesk.store.shared import SharedData
from gwdesk.store.team import Audit, Claims, Presence


def test_a_console_that_arrived_is_live_and_one_that_left_is_not(database: Database) -> None:
    presence = Presence(database)
    presence.arrive("a", "alex", "desk-1", "0.2.0")
    presence.arrive("b", "sam", "desk-2", "0.2.0")
    assert [c.operator for c in presence.live()] == ["alex", "sam"]
    presence.leave("a")
    assert [c.operator for c in presence.live()] == ["sam"]


def test_a_console_not_heard_from_has_gone(database: Database) -> None:
    presence = Presence(database)
    presence.arrive("a", "alex", "desk-1", "0.2.0")
    time.sleep(0.05)
    assert presence.live(within=0.01) == []
    presence.still_here("a")
    assert [c.id for c in presence.live(within=0.5)] == ["a"]


def test_a_typing_note_is_seen_by_others_and_lapses(database: Database) -> None:
    claims = Claims(database)
    claims.hold("conversation:61412345678", "a", "alex", seconds=0.2)
    held = claims.holders("conversation:61412345678", besides="b")
    assert [c.operator for c in held] == ["alex"]
    assert claims.holders("conversation:61412345678", besides="a") == []  # one's own
    time.sleep(0.3)
    assert claims.holders("conversation:61412345678", besides="b") == []


def test_two_operators_typing_each_see_the_other(database: Database) -> None:
    claims = Claims(database)
    claims.hold("conversation:1", "a", "alex")
    claims.hold("conversation:1", "b", "sam")
    assert [c.operator for c in claims.holders("conversation:1", besides="a")] == ["sam"]
    assert [c.operator for c in claims.holders("conversation:1", besides="b")] == ["alex"]


def test_releasing_a_note_leaves_the_others(database: Database) -> None:
    claims = Claims(database)
    claims.hold("conversation:1", "a", "alex")
    claims.hold("conversation:1", "b", "sam")
    claims.release("conversation:1", "b")
    assert [c.operator for c in claims.holders("conversation:1")] == ["alex"]


def test_renewing_a_note_keeps_one_per_console(database: Database) -> None:
    claims = Claims(database)
    claims.hold("conversation:1", "a", "alex", seconds=0.2)
    claims.hold("conversation:1", "a", "alex", seconds=30)
    time.sleep(0.3)
    assert [c.console for c in claims.holders("conversation:1")] == ["a"]


def test_the_audit_log_keeps_who_did_what_in_order(shared: SharedData) -> None:
    for operator, number, reason in (
        ("alex", "61412345678", "asked by phone"),
        ("sam", "61412000111", "complaint <b>by</b> email"),
    ):
        store = OptOutStore(shared, "ops@gw", operator=operator)
        store.set(number, True, reason=reason)
        store.close()
    database = shared.open()
    audit = Audit(database)
    entries = audit.entries()
    assert [(e.operator, e.action) for e in entries] == [
        ("alex", "opted out"),
        ("sam", "opted out"),
    ]
    assert entries[1].detail == "complaint <b>by</b> email"
    assert audit.entries(after_id=entries[0].id) == entries[1:]
    assert audit.entries(action="opted out", after_id=entries[0].id) == entries[1:]
    assert audit.entries(action="sent") == []
    assert audit.last_id() == entries[1].id
    database.close()
