"""The outbox check at each start: what it found, in plain words, and whether that needs
the operator now.

Every activation settles what a crash or a lost answer left in flight
(`Recovery.reconcile`); what is left unfinished waits for the operator to resume or
discard it. The Outbox window opens by itself only when something needs them: a
request settled just now, or an unfinished send they have not been shown yet (the
newest shown is kept in the profile's file, `OUTBOX_TOLD_UP_TO`). Sends already shown
stay a menu item away (File ▸ Outbox…) and in the status bar's line, so the window
does not reopen at every start until they are discarded.

A send is named as the operator made it: "Message to +61 412 345 678" for a single
message, "List of 250 recipients" for a list, never by the outbox's own numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gwdesk.app.recovery import (
    EntryState,
    OutboxBatch,
    OutboxEntry,
    Reconciled,
    ReconcileReport,
    Recovery,
)
from gwdesk.domain.numbers import display
from gwdesk.domain.settings import OUTBOX_TOLD_UP_TO
from gwdesk.store.stored_settings import StoredSettings


@dataclass(frozen=True, slots=True)
class OutboxFindings:
    """What one check came to."""

    report: ReconcileReport
    batches: tuple[OutboxBatch, ...]
    """The unfinished sends, newest first."""
    needs_operator: bool
    """Whether the Outbox window should open by itself."""


def needs_operator(
    report: ReconcileReport, batches: Sequence[OutboxBatch], told_up_to: int
) -> bool:
    """Something settled just now, or an unfinished send the operator was not shown."""
    return bool(report.settled) or any(batch.id > told_up_to for batch in batches)


async def check_outbox(recovery: Recovery, settings: StoredSettings) -> OutboxFindings:
    """Settle what was interrupted, read what is unfinished, and decide whether to tell."""
    report = await recovery.reconcile()
    batches = tuple(await recovery.open_batches())
    told = await recovery.runner.db(settings.get, OUTBOX_TOLD_UP_TO)
    return OutboxFindings(report, batches, needs_operator(report, batches, told))


async def shown(
    recovery: Recovery, settings: StoredSettings, batches: Sequence[OutboxBatch]
) -> None:
    """The operator was shown these sends: they no longer open the window by themselves."""
    if batches:
        newest = max(batch.id for batch in batches)
        await recovery.runner.db(settings.keep_highest, OUTBOX_TOLD_UP_TO, newest)


def send_name(batch: OutboxBatch) -> str:
    """A send as the operator made it: one message, or a list of so many."""
    if batch.recipients == 1 and batch.entries == 1:
        return "Single message"
    return f"List of {batch.recipients:,} recipients"


def request_name(entry: OutboxEntry) -> str:
    """One request of a send: a message to its number, or a part of a list."""
    if len(entry.recipients) == 1 and entry.seq == 1:
        return f"Message to {display(entry.recipients[0])}"
    return f"Request {entry.seq} of a list send ({len(entry.recipients):,} recipients)"


def settled_words(item: Reconciled) -> str:
    """One settled request, for the Outbox window and `gwdesk outbox`."""
    return f"{request_name(item.entry)}: {item.outcome}. {item.detail}"


__all__ = [
    "EntryState",
    "OutboxFindings",
    "check_outbox",
    "needs_operator",
    "request_name",
    "send_name",
    "settled_words",
    "shown",
]
