"""Presence, typing claims and the audit log, on both engines."""

from __future__ import annotations

import time

from gwdesk.store.engine import Database
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


def test_a_typing_claim_is_seen_by_others_and_lapses(database: Database) -> None:
    claims = Claims(database)
    claims.hold("conversation:61412345678", "a", "alex", seconds=0.2)
    held = claims.holder("conversation:61412345678", besides="b")
    assert held is not None
    assert held.operator == "alex"
    assert claims.holder("conversation:61412345678", besides="a") is None  # one's own
    time.sleep(0.3)
    assert claims.holder("conversation:61412345678", besides="b") is None


def test_the_last_to_type_holds_the_claim_and_releasing_ends_it(database: Database) -> None:
    claims = Claims(database)
    claims.hold("conversation:1", "a", "alex")
    claims.hold("conversation:1", "b", "sam")
    held = claims.holder("conversation:1", besides="a")
    assert held is not None
    assert held.operator == "sam"
    claims.release("conversation:1", "b")
    assert claims.holder("conversation:1") is None


def test_the_audit_log_keeps_who_did_what_in_order(database: Database) -> None:
    audit = Audit(database)
    audit.record("alex", "a", "sent", "61412345678", "Hello")
    audit.record("sam", "b", "opted out", "61412000111", "complaint <b>by</b> email")
    entries = audit.entries()
    assert [(e.operator, e.action) for e in entries] == [("alex", "sent"), ("sam", "opted out")]
    assert entries[1].detail == "complaint <b>by</b> email"
    assert audit.entries(after_id=entries[0].id) == entries[1:]
