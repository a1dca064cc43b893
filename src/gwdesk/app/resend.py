"""Resend to the failed: a new list of exactly a report's failed recipients, the same message.

"The failed" are the recipients whose request failed when it was sent and those whose
message's status says it failed (`send_report.FAILED`); never one that was delivered,
awaits a status, or whose request's outcome is unknown (it may have been lodged). The
new list is an ordinary list send of the message the batch recorded (without a
`SendAt`: it goes now): weighed and asked about as every list send is
(`ListSend.prepare_list`: the opt-out list screened again, the cost, the same text to
most of them within the repeat window), then recorded as a batch of its own through
`Sending` and run as any list is.

Recording it also retires the original's requests that failed when sent (`RESENT`
in their reason, failed for good), under the original's claim: the outbox's resume
and a later resend never send them again. A recipient whose message failed on
delivery belongs to a lodged request, which the outbox never sends again; a second
resend of the same batch finds the first in the send history, and its question
says so. A personal send (a text per recipient) and a Lodge send are refused.
Qt-free: the Batch tab and `gwdesk report --resend-failed` render and answer it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Final

from gwdesk.app.list_send import ListRun, ListSend, PreparedSend
from gwdesk.app.list_send.flow import Weigh
from gwdesk.app.send_report import RESENT, Fate, SendReport
from gwdesk.app.sms import SmsMessage
from gwdesk.domain.errors import GatewayError, ValidationError
from gwdesk.importing.recipients import RecipientList
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import SMS, EntryState

log = logging.getLogger("gwdesk.app.resend")
NOBODY: Final = "Nobody in this list failed: there is nothing to send again."
TITLE: Final = "Resend to the failed?"


@dataclass(frozen=True, slots=True)
class Resend:
    """A resend to the failed, weighed and asked about, not yet recorded."""

    report: SendReport
    """The report it was made from (the original batch)."""
    message: SmsMessage
    numbers: tuple[str, ...]
    """The failed recipients, in the batch's order."""
    refused: tuple[int, ...]
    """The original's entries that failed when sent: retired once the resend is recorded."""
    prepared: PreparedSend

    @property
    def question_note(self) -> str:
        """What the resend is, said before its question."""
        totals = self.report.totals
        return (
            f"Resend to the failed of batch {self.report.batch.id}: "
            f"{totals[Fate.REFUSED]:,} failed when sent, "
            f"{totals[Fate.DELIVERY_FAILED]:,} on delivery."
        )


def failed_message(report: SendReport) -> tuple[SmsMessage, tuple[int, ...]]:
    """The one message the failed recipients were sent, and the entries that failed when
    sent; `GatewayError` when they were sent several texts or it cannot be read."""
    batch = report.batch
    if batch.channel != SMS:
        raise GatewayError(
            f"Batch {batch.id} is a {batch.channel[:20]} send: only an SMS list sent over "
            "REST can be sent again to its failed recipients."
        )
    failing = {row.request for row in report.failed()}
    entries = [e for e in report.entries if e.seq in failing]
    bodies = {repr(sorted(e.body.items())) for e in entries}
    if len(bodies) != 1:
        raise GatewayError(
            "The failed recipients were sent different texts (a personal send, or a list "
            "whose text changed before Send remaining): send them again from the Batch tab."
        )
    try:
        message = SmsMessage.from_json(entries[0].body)
    except ValueError as exc:
        raise GatewayError(f"The batch's message cannot be read ({exc}): not sent.") from None
    refused = tuple(e.id for e in entries if e.state is EntryState.FAILED)
    return replace(message, send_at=None), refused


async def prepare_resend(
    flow: ListSend, report: SendReport, *, weigh: Weigh | None = None
) -> Resend:
    """The failed recipients of `report` as a list send of the batch's message, weighed
    and asked about (`ValidationError` at Recipients when nobody failed)."""
    failed = report.failed()
    if not failed:
        raise ValidationError(NOBODY, field="Recipients", status=None)
    message, refused = failed_message(report)
    numbers = tuple(dict.fromkeys(row.number for row in failed))
    # Asked of a flow with no list shown: the list shown is the original, whose
    # lodged recipients this send leaves alone ("already reached" is not its concern).
    asking = replace(flow)
    prepared = await asking.prepare_list(message, RecipientList(numbers, (), 0), weigh=weigh)
    if prepared.question is not None:
        prepared = replace(prepared, question=replace(prepared.question, title=TITLE))
    return Resend(report, message, numbers, refused, prepared)


async def record_resend(flow: ListSend, resend: Resend) -> ListRun:
    """Record the resend as a batch of its own (the list `flow` shows from now on), and
    retire the original's requests that failed when sent, under the original's claim
    (`OutboxBusy` when another gwdesk is sending it: nothing is recorded)."""
    runner = flow.sending.runner
    original = resend.report.batch.id
    async with runner.claimed(original):
        run = await flow.record(resend.prepared)
        reason = f"{RESENT}{run.batch.id}"
        for entry_id in resend.refused:
            try:
                entry = await runner.db(runner.outbox.entry, entry_id)
                if entry is not None and entry.state is EntryState.FAILED:
                    await runner.change(
                        runner.outbox.give_up, entry_id, f"{reason}; {entry.reason}"
                    )
            except StoreError as exc:  # the resend is recorded: it goes all the same
                log.warning("request %d of batch %d not retired: %s", entry_id, original, exc)
    return run
