"""What the durable outbox keeps and reports, apart from the sending itself.

The JSON body of a recorded request and the `Outgoing` read back from it, which
gateway account a batch belongs to, how a Lodge answer is recorded, a request's
outcome written and read back, and the reports of reconciling and resuming. The
command line, the console and `OutboxSender` share these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from gwdesk.domain.models import LodgeResult, LodgeResults, LodgeText, Message
from gwdesk.domain.profile import Profile
from gwdesk.gateway.errors import (
    AmbiguousSendError,
    GatewayError,
    NotFoundError,
    ValidationError,
)
from gwdesk.gateway.sending import ChunkResult, Outgoing
from gwdesk.store.outbox import EntryState, OutboxEntry, OutboxStore


class Settled(StrEnum):
    """What reconciling an interrupted entry found."""

    LODGED = "lodged"
    NOT_LODGED = "not lodged"
    UNKNOWN = "still unknown"
    MANUAL = "check by hand"
    DAMAGED = "damaged record"


@dataclass(frozen=True, slots=True)
class Reconciled:
    batch_id: int
    entry_id: int
    seq: int
    external_system_id: str | None
    recipients: int
    outcome: Settled
    detail: str = ""
    found: int = 0


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    settled: tuple[Reconciled, ...] = ()
    busy: tuple[int, ...] = ()
    """Batches another running gwdesk is working on (left alone)."""

    def count(self, outcome: Settled) -> int:
        return sum(1 for r in self.settled if r.outcome is outcome)

    def summary(self) -> str:
        """One line for a status bar or a command line."""
        if not self.settled:
            return "no interrupted send to check"
        parts = [f"{self.count(o)} {o.value}" for o in Settled if self.count(o)]
        noun = "request" if len(self.settled) == 1 else "requests"
        return f"{len(self.settled)} interrupted {noun} checked: {', '.join(parts)}"


@dataclass(frozen=True, slots=True)
class ResumeReport:
    reconcile: ReconcileReport
    sent: tuple[ChunkResult, ...] = ()
    batches: tuple[int, ...] = ()
    """Batches worked on."""
    given_up: int = 0
    """Entries that could not be sent (damaged rows, Lodge requests)."""

    @property
    def busy(self) -> tuple[int, ...]:
        return self.reconcile.busy

    @property
    def lodged_recipients(self) -> int:
        return sum(len(c.recipients) for c in self.sent if c.lodged)

    @property
    def failed(self) -> tuple[ChunkResult, ...]:
        return tuple(c for c in self.sent if not c.lodged)


@dataclass(frozen=True, slots=True)
class LodgeVerdict:
    """What a Lodge answer says: lodged or refused, and the MsgID when there is one."""

    ok: bool
    message_id: str | None = None
    detail: str = ""


def lodge_verdict(answer: LodgeText | LodgeResult | LodgeResults) -> LodgeVerdict:
    """What the outbox records of a Lodge answer (a document lodged in part counts as
    lodged, with its failures in the detail: none of it may be sent again blindly)."""
    if isinstance(answer, LodgeText):
        return LodgeVerdict(answer.ok, None, f"{answer.operation}: {answer.text}"[:300])
    if isinstance(answer, LodgeResult):
        detail = "" if answer.ok else answer.error_msg or f"result {answer.result}"
        return LodgeVerdict(answer.ok, answer.msg_id, detail)
    first = next((r.msg_id for r in answer.results if r.ok and r.msg_id), None)
    detail = f"{answer.lodged} of {len(answer.results)} lodged"
    if answer.failed:
        number, result = answer.failed[0]
        detail += f"; message {number}: {result.error_msg or f'result {result.result}'}"
    return LodgeVerdict(answer.lodged > 0, first, detail[:300])


def gateway_key(profile: Profile, *, sandbox: bool = False) -> str:
    """Which gateway account a batch was recorded for: only that one resumes it.

    A profile's URL and user name name its account; the embedded sandbox keeps its
    account across runs but changes port, so it is named by its user alone.
    """
    if sandbox:
        return f"sandbox:{profile.username}"
    return f"{profile.username}@{profile.rest_url.rstrip('/').lower()}"


def outgoing_body(outgoing: Outgoing) -> dict[str, Any]:
    """An `Outgoing` (recipients aside) as the JSON the outbox keeps."""
    return {
        "text": outgoing.text,
        "source": outgoing.source,
        "send_at": outgoing.send_at.isoformat() if outgoing.send_at is not None else None,
        "reply_type": outgoing.reply_type,
        "reply_path": outgoing.reply_path,
        "external_id": outgoing.external_id,
        "tags": outgoing.tags,
    }


def outgoing_from_body(body: Mapping[str, Any]) -> Outgoing:
    """The `Outgoing` an entry was recorded with; ValueError when the record is not one."""
    text = body.get("text")
    if not isinstance(text, str) or not text:
        raise ValueError("it holds no message text")
    optional: dict[str, str | None] = {}
    for key in ("source", "reply_type", "reply_path", "external_id", "tags"):
        value = body.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"its {key} is not text")
        optional[key] = value
    send_at = body.get("send_at")
    moment: datetime | None = None
    if send_at is not None:
        if not isinstance(send_at, str):
            raise ValueError("its send_at is not a time")
        moment = datetime.fromisoformat(send_at)
        if moment.tzinfo is None:
            raise ValueError("its send_at has no time zone")
    return Outgoing(
        text=text,
        recipients=(),
        source=optional["source"],
        send_at=moment,
        reply_type=optional["reply_type"],
        reply_path=optional["reply_path"],
        external_id=optional["external_id"],
        tags=optional["tags"],
    )


def retryable(error: GatewayError) -> bool:
    """A failure that another try may not meet (a refusal of the message itself will)."""
    return not isinstance(error, ValidationError | NotFoundError)


def record_result(outbox: OutboxStore, entry_id: int, result: ChunkResult) -> None:
    """Write a request's outcome: lodged, unknown (maybe processed) or failed."""
    error = result.error
    if error is None:
        message = result.message or (result.found[0] if result.found else None)
        outbox.lodged(
            entry_id,
            message_id=message.message_id if message else None,
            batch_code=result.batch_code,
            found=1 if result.message else len(result.found),
            reason="settled by a status query after the answer was lost" if result.resolved else "",
        )
    elif error.maybe_processed:
        outbox.unknown(entry_id, reason=error.message)
    else:
        outbox.failed(
            entry_id, reason=error.message, error_kind=error.kind, retryable=retryable(error)
        )


def result_of(entry: OutboxEntry) -> ChunkResult:
    """A `ChunkResult` from what the outbox recorded (an entry that was not sent now)."""
    external_id = entry.external_system_id or ""
    if entry.state is EntryState.LODGED:
        found: tuple[Message, ...] = ()
        if entry.message_id and not entry.batch_code and entry.recipients:
            found = (
                Message.model_validate(
                    {
                        "PhoneNumber": entry.recipients[0],
                        "MessageId": entry.message_id,
                        "Status": "lodged earlier",
                    }
                ),
            )
        return ChunkResult(
            entry.seq,
            external_id,
            entry.recipients,
            batch_code=entry.batch_code,
            found=found,
            resolved=True,
        )
    if entry.state in (EntryState.IN_FLIGHT, EntryState.UNKNOWN):
        error: GatewayError = AmbiguousSendError(
            f"Request {entry.seq} is {entry.state.value.replace('_', ' ')} in the outbox; it is "
            "settled by a status query before anything is sent again.",
            external_system_id=entry.external_system_id,
            recipients=entry.recipients,
        )
    else:
        error = GatewayError(
            f"Request {entry.seq} was not sent: it is {entry.state.value} in the outbox"
            + (f" ({entry.reason})" if entry.reason else "")
            + "."
        )
    return ChunkResult(entry.seq, external_id, entry.recipients, error=error)
