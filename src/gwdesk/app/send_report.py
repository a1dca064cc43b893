"""A send's report: what became of each recipient of a list, and the totals, kept current.

Built from two sources, each the authority on its part:

- the outbox (`store/outbox.py`): whether each request of 100 was lodged, failed when
  it was sent (the gateway refused it, or it failed for good), is still unknown, was
  never sent (waiting, or a run the operator stopped) or was cancelled, and who was
  left out because they had opted out;
- the gateway's status of each lodged message (DELIVERED, FAILED, EXPIRED, ... or
  still ACTIVE), asked per request by its ExternalSystemId, as `app/status.py` asks
  it, a few requests at a time (`CONCURRENCY`).

Why the status endpoint and not the synced log (`logs/`): a log record carries no
ExternalSystemId, so the log cannot say which request (which send) a record belongs
to; the status query answers exactly the request's own messages (`send_values.ours`
keeps an operator's shared ExternalSystemId to this batch's recipients, past its
baseline). It is also current, where the log is as old as its last sync (a minute in
the console, never in a command). Statuses change for hours, so a report is made
again (`SendReports.refresh`): a request whose every message has a final status
(delivered or failed) is not asked again.

A status value the contract does not name is shown verbatim and counts as awaiting
a final status: only a status that says the message failed makes its recipient one
of "the failed" (`app/resend.py` sends to them again). Qt-free.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Final

from gwdesk.app.send_values import OPERATOR_CANCELLED, ours, recipient_digits
from gwdesk.app.sending import Sending
from gwdesk.domain.errors import AuthenticationError, GatewayError
from gwdesk.domain.models import Message
from gwdesk.domain.numbers import display
from gwdesk.importing.export import write_csv
from gwdesk.store.outbox import SMS, EntryState, OutboxBatch, OutboxEntry

log = logging.getLogger("gwdesk.app.send_report")
#: Status queries of one report on the wire at once.
CONCURRENCY: Final = 4
#: The reason a request failed when sent keeps once its recipients were sent again
#: (`app/resend.py`): neither the outbox nor another resend sends them a third time.
RESENT: Final = "sent again to the failed, in batch "
DELIVERED_STATUSES: Final = frozenset({"DELIVERED"})
#: Statuses that say the message will not arrive. Any other value awaits a final one.
FAILED_STATUSES: Final = frozenset(
    {"FAILED", "EXPIRED", "REJECTED", "UNDELIVERED", "UNDELIVERABLE"}
)
#: How a request's reason starts when the operator cancelled or discarded it.
CANCEL_WORDS: Final = ("cancelled", "discarded")
CSV_HEADER: Final = (
    "Number", "Outcome", "Status", "MessageId", "Request", "ExternalSystemId", "Why",
)  # fmt: skip


class Fate(StrEnum):
    """What became of one recipient."""

    DELIVERED = "delivered"
    DELIVERY_FAILED = "delivery_failed"
    """Lodged, and its status says it failed (or expired, or was rejected)."""
    REFUSED = "refused"
    """Its request failed when it was sent (the gateway refused it, or it failed for good)."""
    AWAITING = "awaiting"
    """Lodged; no final status yet (or its message not created yet)."""
    UNKNOWN = "unknown"
    """Whether its request was lodged is not known yet (in flight, or its answer lost)."""
    NOT_SENT = "not_sent"
    """Not sent yet: waiting, held for its time, or left when a run stopped."""
    CANCELLED = "cancelled"
    OPTED_OUT = "opted_out"
    RESENT = "resent"
    """Failed when sent, and already sent again in a later batch."""

    @property
    def words(self) -> str:
        return WORDS[self]


WORDS: Final = {
    Fate.DELIVERED: "delivered",
    Fate.DELIVERY_FAILED: "failed on delivery",
    Fate.REFUSED: "failed when sent",
    Fate.AWAITING: "awaiting a status",
    Fate.UNKNOWN: "unknown",
    Fate.NOT_SENT: "not sent yet",
    Fate.CANCELLED: "cancelled",
    Fate.OPTED_OUT: "opted out",
    Fate.RESENT: "sent again",
}
#: The recipients "resend to the failed" sends to again.
FAILED: Final = (Fate.REFUSED, Fate.DELIVERY_FAILED)


def fate_of_status(status: str) -> Fate:
    """A lodged message's fate by the gateway's status (any letter case)."""
    word = status.strip().upper()
    if word in DELIVERED_STATUSES:
        return Fate.DELIVERED
    if word in FAILED_STATUSES:
        return Fate.DELIVERY_FAILED
    return Fate.AWAITING


@dataclass(frozen=True, slots=True)
class RecipientRow:
    """One recipient of the list, as the report found it."""

    number: str
    """International digits, as the outbox keeps them."""
    fate: Fate
    request: int = 0
    """The request's number in the batch (0: left out before any request)."""
    external_system_id: str = ""
    status: str = ""
    """The gateway's status, verbatim ('' when none was learnt)."""
    message_id: str = ""
    why: str = ""
    """The outbox's reason for a request that did not lodge."""

    @property
    def shown_number(self) -> str:
        return display(self.number)


@dataclass(frozen=True, slots=True)
class Learnt:
    """What the status endpoint said of one request's messages."""

    statuses: Mapping[str, tuple[str, str]]
    """Recipient digits -> (MessageId, status)."""
    final: bool
    """Every recipient's message has a final status: the request is not asked again."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Recipients by fate, and the figures the console and the command line show."""

    counts: Mapping[Fate, int]

    def __getitem__(self, fate: Fate) -> int:
        return self.counts.get(fate, 0)

    @property
    def recipients(self) -> int:
        return sum(self.counts.values())

    @property
    def lodged(self) -> int:
        return self[Fate.DELIVERED] + self[Fate.DELIVERY_FAILED] + self[Fate.AWAITING]

    @property
    def failed(self) -> int:
        return sum(self[f] for f in FAILED)

    def as_json(self) -> dict[str, int]:
        return {
            "recipients": self.recipients,
            "lodged": self.lodged,
            "failed": self.failed,
            **{fate.value: self[fate] for fate in Fate},
        }


@dataclass(frozen=True, slots=True)
class SendReport:
    """A batch's report as it stood when made (`SendReports.refresh` makes it again)."""

    batch: OutboxBatch
    entries: tuple[OutboxEntry, ...]
    rows: tuple[RecipientRow, ...]
    learnt: Mapping[int, Learnt] = field(default_factory=dict)
    """By outbox entry id: what the status endpoint said of each lodged request."""
    problems: tuple[str, ...] = ()
    """Requests whose status could not be asked this time, each with why."""
    asked_at: datetime | None = None
    """When the gateway was last asked (None: it was not asked)."""
    totals: Totals = field(init=False)
    by_request: Mapping[int, Counter[Fate]] = field(init=False)
    """Each request's recipients by fate, by its number in the batch."""

    def __post_init__(self) -> None:
        tallies: dict[int, Counter[Fate]] = {}
        for row in self.rows:
            tallies.setdefault(row.request, Counter())[row.fate] += 1
        object.__setattr__(self, "by_request", tallies)
        total: Counter[Fate] = Counter()
        for tally in tallies.values():
            total.update(tally)
        object.__setattr__(self, "totals", Totals(total))

    def failed(self) -> tuple[RecipientRow, ...]:
        """The recipients "resend to the failed" texts again."""
        return tuple(row for row in self.rows if row.fate in FAILED)

    def tally(self, entry: OutboxEntry) -> Counter[Fate]:
        """One request's recipients by fate (empty for a request of another batch)."""
        if entry.batch_id != self.batch.id:
            return Counter()
        return self.by_request.get(entry.seq, Counter())


def tally_text(tally: Counter[Fate]) -> str:
    """`97 delivered, 2 failed, 1 awaiting`: a request's messages by their status."""
    failed = tally[Fate.DELIVERY_FAILED]
    parts = [
        (tally[Fate.DELIVERED], "delivered"),
        (failed, "failed"),
        (tally[Fate.AWAITING], "awaiting"),
    ]
    return ", ".join(f"{n:,} {word}" for n, word in parts if n)


def totals_line(totals: Totals) -> str:
    """The report in one line, as the status bar and the command line say it."""
    failed = f"{totals.failed:,} failed"
    if totals.failed:
        failed += (
            f" ({totals[Fate.REFUSED]:,} when sent, {totals[Fate.DELIVERY_FAILED]:,} on delivery)"
        )
    parts = [f"{totals[Fate.DELIVERED]:,} delivered", failed]
    for fate in (Fate.AWAITING, Fate.UNKNOWN, Fate.NOT_SENT, Fate.CANCELLED, Fate.OPTED_OUT):
        if totals[fate]:
            parts.append(f"{totals[fate]:,} {fate.words}")
    if totals[Fate.RESENT]:
        parts.append(f"{totals[Fate.RESENT]:,} failed and {Fate.RESENT.words}")
    return f"{totals.recipients:,} recipients: " + ", ".join(parts)


# ---- composing ---------------------------------------------------------------------------


def cancelled(entry: OutboxEntry) -> bool:
    """A failed request the operator cancelled or discarded (never sent by the outbox)."""
    return entry.error_kind == OPERATOR_CANCELLED or entry.reason.lower().startswith(CANCEL_WORDS)


def _entry_fate(entry: OutboxEntry) -> Fate | None:
    """The fate every recipient of a request shares (None: lodged, each their own)."""
    state = entry.state
    if state is EntryState.LODGED:
        return None
    if state is EntryState.PENDING:
        return Fate.NOT_SENT
    if state is EntryState.FAILED:
        if entry.reason.startswith(RESENT):
            return Fate.RESENT
        return Fate.CANCELLED if cancelled(entry) else Fate.REFUSED
    return Fate.UNKNOWN


def _digits(number: str) -> str:
    return "".join(c for c in number if c.isdigit())


def compose(
    batch: OutboxBatch,
    entries: Sequence[OutboxEntry],
    learnt: Mapping[int, Learnt],
    *,
    problems: Sequence[str] = (),
    asked_at: datetime | None = None,
) -> SendReport:
    """The report of `batch` from its entries as they stand and the statuses learnt."""
    excluded = list(dict.fromkeys(batch.excluded))
    left_out = set(excluded)
    rows = [RecipientRow(number, Fate.OPTED_OUT) for number in excluded]
    for entry in entries:
        shared = _entry_fate(entry)
        known = learnt.get(entry.id)
        ref = entry.external_system_id or ""
        for number in entry.recipients:
            if number in left_out:
                continue  # listed once, as opted out
            if shared is not None:
                why = entry.reason or ("being sent" if entry.state is EntryState.IN_FLIGHT else "")
                rows.append(RecipientRow(number, shared, entry.seq, ref, why=why))
                continue
            message_id, status = (
                known.statuses.get(_digits(number), ("", "")) if known is not None else ("", "")
            )
            fate = fate_of_status(status) if status else Fate.AWAITING
            rows.append(RecipientRow(number, fate, entry.seq, ref, status, message_id))
    return SendReport(batch, tuple(entries), tuple(rows), dict(learnt), tuple(problems), asked_at)


def learnt_from(entry: OutboxEntry, messages: Iterable[Message]) -> Learnt:
    """A status answer as the report keeps it: the latest message of each recipient."""
    statuses: dict[str, tuple[str, str]] = {}
    for message in sorted(messages, key=lambda m: m.message_id):
        statuses[_digits(message.phone_number)] = (message.message_id, message.status or "")
    final = all(
        fate_of_status(statuses.get(_digits(n), ("", ""))[1]) is not Fate.AWAITING
        for n in entry.recipients
    )
    return Learnt(statuses, final)


# ---- asking the gateway ------------------------------------------------------------------


class ReportError(GatewayError):
    """A report that cannot be made: the message says why (nothing was changed)."""


def asked(entry: OutboxEntry) -> bool:
    """A request whose messages the status endpoint can name: a lodged REST one."""
    return (
        entry.state is EntryState.LODGED and entry.channel == SMS and bool(entry.external_system_id)
    )


@dataclass(eq=False, repr=False)
class SendReports:
    """One profile's send reports: read from its outbox, statuses asked of its gateway."""

    sending: Sending

    async def read(self, batch_id: int) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """The batch and its entries as they stand (`ReportError` when there is none, or it
        is another gateway account's)."""
        runner = self.sending.runner
        batch = await runner.db(runner.outbox.batch, batch_id)
        if batch is None:
            raise ReportError(f"There is no outbox batch {batch_id}.")
        if batch.gateway != runner.account:
            raise ReportError(
                f"Batch {batch_id} was sent through another gateway account "
                f"({batch.gateway[:80]}); report it with that profile."
            )
        return batch, await runner.db(runner.outbox.entries, batch_id)

    async def refresh(self, batch_id: int, previous: SendReport | None = None) -> SendReport:
        """The batch's report now: the outbox read again, and each lodged request's status
        asked unless `previous` already holds a final status for all its messages.
        A request whose status cannot be asked keeps what `previous` learnt, and is named
        in `problems`; a refused login is raised (`AuthenticationError`)."""
        batch, entries = await self.read(batch_id)
        learnt: dict[int, Learnt] = dict(previous.learnt) if previous is not None else {}
        due = [e for e in entries if asked(e) and not (e.id in learnt and learnt[e.id].final)]
        problems: list[tuple[int, str]] = []
        gate = asyncio.Semaphore(CONCURRENCY)

        async def ask(entry: OutboxEntry) -> None:
            async with gate:
                try:
                    messages = await self.sending.runner.gateway.status(
                        external_system_id=entry.external_system_id or ""
                    )
                except AuthenticationError:
                    raise
                except GatewayError as exc:
                    log.info("status of request %d: %s", entry.seq, exc.message)
                    problems.append((entry.seq, f"request {entry.seq}: {exc.message}"))
                    return
            wanted = None if entry.own_id else recipient_digits(entry.recipients)
            learnt[entry.id] = learnt_from(entry, ours(messages, batch.baseline, wanted))

        asked_at = datetime.now(UTC) if due else (previous.asked_at if previous else None)
        await asyncio.gather(*(ask(e) for e in due))
        said = [text for _seq, text in sorted(problems)]
        return compose(batch, entries, learnt, problems=said, asked_at=asked_at)

    async def export(self, report: SendReport, path: Path) -> int:
        """The report's recipients written to `path` as CSV (every cell defused: the
        one writer, `domain/spreadsheet.py`); how many rows."""
        return await asyncio.to_thread(export_csv, report, path)


def csv_rows(report: SendReport) -> Iterable[tuple[object, ...]]:
    for row in report.rows:
        yield (
            f"+{row.number}",
            row.fate.words,
            row.status,
            row.message_id,
            row.request or "",
            row.external_system_id,
            row.why,
        )


def export_csv(report: SendReport, path: Path) -> int:
    """Blocking: a worker thread's (`SendReports.export`)."""
    return write_csv(path, CSV_HEADER, csv_rows(report))
