"""What the outbox check at a start decides without Qt (`gwdesk.app.outbox_check`): whether
the Outbox window opens by itself, and the names it gives a send and a request."""

from __future__ import annotations

from dataclasses import replace

from gwdesk.app.outbox_check import needs_operator, request_name, send_name
from gwdesk.app.recovery import EntryState, OutboxBatch, OutboxEntry, Reconciled, ReconcileReport
from gwdesk.store.outbox_rows import StateCount

ENTRY = OutboxEntry(
    id=1, batch_id=7, seq=1, channel="sms", external_system_id="gwd-1", own_id=False,
    recipients=("61412345678",), recipient_count=1, body={}, state=EntryState.LODGED,
    attempts=1, message_id="m1", batch_code=None, found=1, reason="", error_kind=None,
    retryable=False, created_us=0, updated_us=0, sent_us=None,
)  # fmt: skip


def batch(batch_id: int, recipients: int, entries: int = 1) -> OutboxBatch:
    counts = {EntryState.PENDING: StateCount(entries, recipients)}
    return OutboxBatch(batch_id, "s", "demo@gw", "sms", "Hello", 0, 0, False, None, counts=counts)


def test_a_send_already_shown_does_not_need_the_operator_again() -> None:
    assert not needs_operator(ReconcileReport(), [batch(7, 250, 3)], told_up_to=7)


def test_a_send_newer_than_the_last_shown_needs_the_operator() -> None:
    assert needs_operator(ReconcileReport(), [batch(7, 250, 3), batch(9, 1)], told_up_to=7)


def test_a_request_settled_just_now_needs_the_operator_whatever_was_shown() -> None:
    report = ReconcileReport(settled=(Reconciled(ENTRY, "lodged"),))
    assert needs_operator(report, [], told_up_to=99)


def test_nothing_settled_and_nothing_unfinished_needs_nobody() -> None:
    assert not needs_operator(ReconcileReport(), [], told_up_to=0)


def test_a_send_is_named_as_the_operator_made_it() -> None:
    assert send_name(batch(7, 1)) == "Single message"
    assert send_name(batch(7, 250, 3)) == "List of 250 recipients"


def test_a_request_is_named_by_its_number_or_its_place_in_a_list() -> None:
    assert request_name(ENTRY) == "Message to +61 412 345 678"
    listed = replace(ENTRY, seq=2, recipients=("61400000001", "61400000002"))
    assert request_name(listed) == "Request 2 of a list send (2 recipients)"
