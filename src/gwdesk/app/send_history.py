"""A send as the history keeps it and the views tell it: the history's row of one
message or of a list's run, a list's state in one line, the number a single send went to.

`gwdesk.app.sending` writes these rows when a send ends; the Batch tab shows a run's
line as it goes. Pure values of the outbox's own rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from gwdesk.app.send_values import RequestOutcome, RunReport
from gwdesk.app.sms import SmsMessage
from gwdesk.domain.errors import AmbiguousSendError
from gwdesk.domain.numbers import display
from gwdesk.store.history import HistoryEntry
from gwdesk.store.outbox import EntryState, OutboxBatch, OutboxEntry

BATCH_CHANNEL: Final = "REST batch"
LOST_ANSWER: Final = "The answer was lost; a status query by ExternalSystemId found the message."


def message_history(
    message: SmsMessage, sent: RequestOutcome, at: datetime, note: str = ""
) -> HistoryEntry:
    """The history row of one message to one recipient."""
    entry, error = sent.entry, sent.error
    recipient = entry.recipients[0] if entry.recipients else ""
    if sent.lodged:
        first = sent.message
        detail = LOST_ANSWER if sent.resolved else (note or entry.reason)
        if message.send_at is not None:
            detail = f"Scheduled for {message.send_at.isoformat()}. {detail}".strip()
        return HistoryEntry(
            at=at,
            channel=message.channel.label,
            recipients=first.phone_number if first else recipient,
            text=message.shown_text,
            ok=True,
            message_id=first.message_id if first else entry.message_id,
            batch_code=entry.batch_code,
            status=first.status if first else "Lodged",
            external_system_id=entry.external_system_id,
            detail=detail,
        )
    return HistoryEntry(
        at=at,
        channel=message.channel.label,
        recipients=recipient,
        text=message.shown_text,
        ok=False,
        status="Unknown" if isinstance(error, AmbiguousSendError) else "Failed",
        external_system_id=entry.external_system_id or message.external_id,
        detail=error.message if error is not None else entry.reason,
    )


def list_history(
    message: SmsMessage,
    batch: OutboxBatch,
    report: RunReport,
    entries: Sequence[OutboxEntry],
    at: datetime,
) -> HistoryEntry:
    """The history row of a list's run: the whole batch as the outbox holds it."""
    if len(entries) == 1 and entries[0].recipient_count == 1 and report.sent:
        return message_history(message, report.sent[0], at)
    total = sum(e.recipient_count for e in entries)
    lodged = [e for e in entries if e.state is EntryState.LODGED]
    first = lodged[0] if lodged else None
    return HistoryEntry(
        at=at,
        channel=BATCH_CHANNEL,
        recipients=f"{total:,} recipient{'s' if total != 1 else ''}",
        text=message.text,
        ok=len(lodged) == len(entries),
        batch_code=first.batch_code if first else None,
        external_system_id=first.external_system_id if first else None,
        detail=progress_text(entries),
    )


STATE_NOUNS: Final = {
    EntryState.IN_FLIGHT: "sending",
    EntryState.FAILED: "failed",
    EntryState.UNKNOWN: "uncertain",
}


def progress_text(entries: Sequence[OutboxEntry]) -> str:
    """`250 of 300 recipients lodged · 1 request failed`: a list's state in one line
    (while it is sent, or after). A pending entry is "not sent" once a run left it
    with a reason (cancelled, halted); until then it is only waiting its turn."""
    total = sum(e.recipient_count for e in entries)
    lodged = sum(e.recipient_count for e in entries if e.state is EntryState.LODGED)
    parts = [f"{lodged:,} of {total:,} recipients lodged"]
    counts = Counter(_shown_state(e) for e in entries)
    for noun in ("sending", "failed", "uncertain", "not sent"):
        if counts[noun]:
            parts.append(
                f"{counts[noun]:,} {'request' if counts[noun] == 1 else 'requests'} {noun}"
            )
    return " · ".join(parts)


def _shown_state(entry: OutboxEntry) -> str:
    if entry.state is EntryState.PENDING:
        return "not sent" if entry.reason else "waiting"
    return STATE_NOUNS.get(entry.state, "")


def shown_recipient(sent: RequestOutcome) -> str:
    """The number a single send went to, as the gateway wrote it when it said."""
    first = sent.message
    return display(first.phone_number if first else sent.entry.recipients[0])
