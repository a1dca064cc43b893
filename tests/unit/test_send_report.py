"""A send's report composed from outbox rows and statuses (no gateway): each recipient's
fate, who counts as failed, a request's tally, and the CSV export of hostile cells."""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gwdesk.app.resend import failed_message
from gwdesk.app.send_report import (
    FAILED,
    RESENT,
    Fate,
    Learnt,
    compose,
    export_csv,
    fate_of_status,
    tally_text,
)
from gwdesk.app.send_values import CANCELLED_NOT_SENT, OPERATOR_CANCELLED
from gwdesk.domain.errors import GatewayError
from gwdesk.domain.spreadsheet import restored
from gwdesk.store.outbox import EntryState, OutboxBatch, OutboxEntry

BODY = {"text": "Hello", "source": None}
#: Where a spreadsheet would run a cell: a formula character after spaces and quotes.
FORMULA = re.compile(r"[ \"']*[=+\-@]")


def batch(excluded: Sequence[str] = (), channel: str = "sms") -> OutboxBatch:
    return OutboxBatch(7, "gwd-x", "acct", channel, "Hello", 0, 0, False, None,
                       excluded=tuple(excluded))  # fmt: skip


def entry(seq: int, state: EntryState, numbers: Sequence[str], **fields: Any) -> OutboxEntry:
    values: dict[str, Any] = {
        "id": seq * 10, "batch_id": 7, "seq": seq, "channel": "sms",
        "external_system_id": f"gwd-x-{seq:04d}", "own_id": True, "recipients": tuple(numbers),
        "recipient_count": len(numbers), "body": BODY, "state": state, "attempts": 1,
        "message_id": None, "batch_code": None, "found": 0, "reason": "", "error_kind": None,
        "retryable": False, "created_us": 0, "updated_us": 0, "sent_us": None,
    }  # fmt: skip
    values.update(fields)
    return OutboxEntry(**values)


def learnt(statuses: dict[str, str]) -> Learnt:
    return Learnt({n: (f"2026{i:016d}", s) for i, (n, s) in enumerate(statuses.items())}, False)


@pytest.mark.parametrize(
    ("status", "fate"),
    [
        ("DELIVERED", Fate.DELIVERED),
        ("delivered", Fate.DELIVERED),
        ("FAILED", Fate.DELIVERY_FAILED),
        ("EXPIRED", Fate.DELIVERY_FAILED),
        ("ACTIVE", Fate.AWAITING),
        ("SOMETHING_NEW", Fate.AWAITING),
        ("", Fate.AWAITING),
    ],
)
def test_a_status_counts_as_failed_only_when_it_says_so(status: str, fate: Fate) -> None:
    assert fate_of_status(status) is fate


def test_each_state_of_a_request_gives_its_recipients_their_fate() -> None:
    entries = [
        entry(1, EntryState.LODGED, ["611", "612", "613"]),
        entry(2, EntryState.FAILED, ["621"], reason="Recipients: refused"),
        entry(3, EntryState.UNKNOWN, ["631"], reason="its answer was lost"),
        entry(4, EntryState.PENDING, ["641"], reason="cancelled before it was sent"),
        entry(5, EntryState.FAILED, ["651"], reason=CANCELLED_NOT_SENT),
        entry(6, EntryState.FAILED, ["661"], error_kind=OPERATOR_CANCELLED, reason="x"),
        entry(7, EntryState.FAILED, ["671"], reason=f"{RESENT}9; refused"),
        entry(8, EntryState.IN_FLIGHT, ["681"]),
    ]
    statuses = {10: learnt({"611": "DELIVERED", "612": "FAILED"})}
    report = compose(batch(excluded=["699"]), entries, statuses)
    fates = {row.number: row.fate for row in report.rows}
    assert fates == {
        "699": Fate.OPTED_OUT,
        "611": Fate.DELIVERED,
        "612": Fate.DELIVERY_FAILED,
        "613": Fate.AWAITING,  # its message not created yet
        "621": Fate.REFUSED,
        "631": Fate.UNKNOWN,
        "641": Fate.NOT_SENT,
        "651": Fate.CANCELLED,
        "661": Fate.CANCELLED,
        "671": Fate.RESENT,
        "681": Fate.UNKNOWN,
    }
    assert {row.number for row in report.failed()} == {"612", "621"}
    assert report.totals.lodged == 3
    assert report.totals.failed == 2


def test_a_number_left_out_after_it_opted_out_is_listed_once_as_opted_out() -> None:
    entries = [entry(1, EntryState.FAILED, ["611"], reason="opted out since it was recorded")]
    report = compose(batch(excluded=["611"]), entries, {})
    assert [(row.number, row.fate) for row in report.rows] == [("611", Fate.OPTED_OUT)]


def test_a_requests_tally_says_its_messages_by_status() -> None:
    lodged = entry(1, EntryState.LODGED, ["611", "612", "613", "614"])
    report = compose(batch(), [lodged], {10: learnt({"611": "DELIVERED", "612": "DELIVERED",
                                                     "613": "EXPIRED"})})  # fmt: skip
    assert tally_text(report.tally(lodged)) == "2 delivered, 1 failed, 1 awaiting"


def test_the_failed_are_only_those_that_failed_when_sent_or_on_delivery() -> None:
    assert set(FAILED) == {Fate.REFUSED, Fate.DELIVERY_FAILED}


def test_the_csv_export_holds_hostile_cells_as_text(tmp_path: Path) -> None:
    hostile = "=cmd|' /C calc'!A0"
    entries = [
        entry(1, EntryState.LODGED, ["611"]),
        entry(2, EntryState.FAILED, ["621"], reason=f"x;{hostile}\n@SUM(1)"),
    ]
    statuses = {10: learnt({"611": '+HYPERLINK("http://evil")'})}
    report = compose(batch(), entries, statuses)
    path = tmp_path / "report.csv"
    assert export_csv(report, path) == 2
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["Number", "Outcome", "Status", "MessageId", "Request", "ExternalSystemId",
                       "Why"]  # fmt: skip
    segments = [seg for row in rows[1:] for cell in row for seg in re.split(r"[,;\t\r\n]", cell)]
    assert all(seg.startswith("'") or not FORMULA.match(seg) for seg in segments)
    assert rows[1][2].startswith("'+HYPERLINK")
    assert restored(rows[2][6]) == f"x;{hostile}\n@SUM(1)"  # nothing lost
    assert rows[1][0] == "'+611"


def test_the_failed_of_a_personal_send_with_several_texts_are_refused() -> None:
    entries = [
        entry(1, EntryState.FAILED, ["611"], reason="refused", body={"text": "Hi Ann"}),
        entry(2, EntryState.FAILED, ["621"], reason="refused", body={"text": "Hi Bob"}),
    ]
    with pytest.raises(GatewayError, match="different texts"):
        failed_message(compose(batch(), entries, {}))


def test_a_lodge_send_is_not_sent_again_to_its_failed() -> None:
    entries = [entry(1, EntryState.FAILED, ["611"], reason="refused", channel="mms")]
    with pytest.raises(GatewayError, match="only an SMS list sent over REST"):
        failed_message(compose(batch(channel="mms"), entries, {}))


def test_the_resend_goes_now_even_when_the_list_was_handed_a_send_at() -> None:
    body = {**BODY, "send_at": "2020-01-01T09:00:00+11:00"}
    entries = [entry(1, EntryState.FAILED, ["611"], reason="refused", body=body)]
    message, refused = failed_message(compose(batch(), entries, {}))
    assert message.send_at is None
    assert message.text == "Hello"
    assert refused == (10,)
