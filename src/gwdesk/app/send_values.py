"""What a send is made of and comes to, apart from the runner that makes it.

The ExternalSystemIds of a send (`gwd-20250101T093000Z-3f9c2a7b1d04-0001`: the UTC
time, 48 random bits shared by the send, the request's number), how a list is cut
into requests of 100, which messages a status query shows are a request's own, the
outcome of one attempt on the wire (`Attempt`) and of each request once recorded
(`RequestOutcome`, holding the outbox's own row), and the rules read off a failure: whether it
halts a run and whether another try may pass. Pure values; `gwdesk.app.outbox`
makes and records them.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

from gwdesk.domain.errors import (
    AmbiguousSendError,
    AuthenticationError,
    GatewayError,
    NotFoundError,
    ValidationError,
)
from gwdesk.domain.models import Message, SendEnvelope
from gwdesk.store.outbox import EntryState, OutboxBatch, OutboxEntry


class StoreAwayError(GatewayError):
    """The store could not be asked before a send left (a team's server away, a file
    locked too long): the opt-out list was not read or the send not recorded, so nothing
    was sent and the operator may try again as it is."""

    kind = "store"

    def __init__(self, what: str, cause: BaseException) -> None:
        super().__init__(f"{what}, so nothing was sent ({cause}). Try again once it is back.")


MAX_RECIPIENTS_PER_REQUEST: Final = 100
MAX_LANES: Final = 16
DEFAULT_LANES: Final = 4
"""Requests on the wire at once unless the operator chose otherwise (the Batch tab's
Parallel, `gwdesk send`)."""
ID_PREFIX: Final = "gwd-"
CANCELLED: Final = "cancelled before it was sent"
#: The error kind of an entry the operator cancelled while it was being sent: the outbox
#: settles it by status and never sends it again by itself (`gwdesk.app.cancelled_send`).
OPERATOR_CANCELLED: Final = "cancelled"
CANCELLED_NOT_SENT: Final = "Cancelled by you before the gateway took it; not sent."
#: The reason a lodged entry keeps when a status query, not its answer, showed it lodged.
SETTLED_BY_STATUS: Final = "settled by a status query after the answer was lost"


def new_send_id(now: datetime | None = None) -> str:
    """The shared part of a send's generated ExternalSystemIds:
    `gwd-20250101T093000Z-3f9c2a7b1d04`, the UTC time and 48 random bits."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{ID_PREFIX}{moment:%Y%m%dT%H%M%SZ}-{secrets.token_hex(6)}"


def chunk_id(send_id: str, index: int) -> str:
    """The ExternalSystemId of request `index` (1-based) of a send."""
    return f"{send_id}-{index:04d}"


def chunked(
    numbers: Sequence[str], size: int = MAX_RECIPIENTS_PER_REQUEST
) -> list[tuple[str, ...]]:
    return [tuple(numbers[i : i + size]) for i in range(0, len(numbers), size)]


def _digits(number: str) -> str:
    return "".join(c for c in number if c.isdigit())


def recipient_digits(recipients: Sequence[str]) -> set[str]:
    return {_digits(r) for r in recipients}


def ours(
    messages: Sequence[Message], baseline: frozenset[str], wanted: set[str] | None
) -> tuple[Message, ...]:
    """The messages a request made: not named before it (`baseline`), and, when its
    ExternalSystemId is shared (`wanted` given), sent to one of its recipients."""
    return tuple(
        m
        for m in messages
        if m.message_id not in baseline and (wanted is None or _digits(m.phone_number) in wanted)
    )


def halts_everything(error: GatewayError) -> bool:
    """Refusals every other request would meet too (the login, the message, the options)."""
    if isinstance(error, AuthenticationError):
        return True
    if not isinstance(error, ValidationError) or error.field is None:
        return False
    return not error.field.startswith("Recipient")


def retryable(error: GatewayError) -> bool:
    """A failure that another try may not meet (a refusal of the message itself will)."""
    return not isinstance(error, ValidationError | NotFoundError)


def not_attempted(cause: GatewayError) -> GatewayError:
    """The error of a request a halting refusal kept back: of the same kind as `cause`
    (a refused login stays an authentication failure), so a caller reports it alike."""
    text = f"Not sent, because an earlier request failed: {cause.message}"
    if isinstance(cause, ValidationError):
        return ValidationError(text, field=cause.field, status=None)
    if isinstance(cause, AuthenticationError):
        return AuthenticationError(text)
    return GatewayError(text)


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one request on the wire came to, before it is recorded."""

    messages: tuple[Message, ...] = ()
    """The answer's message (one recipient), or those a status query found."""
    batch_code: str | None = None
    message_id: str | None = None
    """A Lodge MsgID (Lodge answers name no `Message`)."""
    detail: str = ""
    resolved: bool = False
    """The outcome was learnt from a status query, not from the request's own answer."""
    attempts: int = 0
    error: GatewayError | None = None
    answer: object = None
    """A Lodge call's own answer, handed back to its caller."""


@dataclass(frozen=True, slots=True)
class RequestOutcome:
    """One request's outcome. `entry` is the outbox's row as it now stands (its state is
    the send's state); the rest is what the attempt learnt for whoever shows it."""

    entry: OutboxEntry
    messages: tuple[Message, ...] = ()
    resolved: bool = False
    attempts: int = 0
    error: GatewayError | None = None
    """Why it is not lodged: a refusal, a lost answer (`AmbiguousSendError`), or not sent."""
    answer: object = None

    @property
    def lodged(self) -> bool:
        return self.entry.state is EntryState.LODGED

    @property
    def message(self) -> Message | None:
        return self.messages[0] if self.messages else None


class Requests:
    """What some requests came to, read off their rows: the one reading of a run's
    `RequestOutcome` (a run's report, a send's outcome, a resumed outbox's report all have it)."""

    __slots__ = ()
    sent: tuple[RequestOutcome, ...]

    @property
    def ok(self) -> bool:
        """Every request lodged (and there was one)."""
        return bool(self.sent) and all(s.lodged for s in self.sent)

    @property
    def recipients(self) -> int:
        return sum(s.entry.recipient_count for s in self.sent)

    @property
    def lodged_recipients(self) -> int:
        return sum(s.entry.recipient_count for s in self.sent if s.lodged)

    @property
    def failed(self) -> tuple[RequestOutcome, ...]:
        return tuple(s for s in self.sent if not s.lodged)

    @property
    def failed_recipients(self) -> int:
        return sum(s.entry.recipient_count for s in self.failed)

    @property
    def error(self) -> GatewayError | None:
        """The first request's error: a single send's reason."""
        return next((s.error for s in self.sent if s.error is not None), None)


@dataclass(frozen=True, slots=True)
class RunReport(Requests):
    """What one run of a batch's entries came to, in the entries' order."""

    batch: OutboxBatch
    sent: tuple[RequestOutcome, ...] = ()
    halted: str = ""
    """Why the run stopped early (a refusal every request would meet), or ''."""
    cancelled: bool = False


Transmit = Callable[[OutboxBatch, OutboxEntry], Awaitable[Attempt]]
"""How one entry leaves: the runner's own REST send, or a Lodge call of the caller's."""
Changed = Callable[[OutboxEntry], None]


def not_pending(entry: OutboxEntry) -> GatewayError | None:
    """Why an entry that was not pending was not sent now (None when it is lodged)."""
    if entry.state is EntryState.LODGED:
        return None
    if entry.state in (EntryState.IN_FLIGHT, EntryState.UNKNOWN):
        return AmbiguousSendError(
            f"Request {entry.seq} is {entry.state.value.replace('_', ' ')} in the outbox; it is "
            "settled by a status query before anything is sent again.",
            external_system_id=entry.external_system_id,
            recipients=entry.recipients,
        )
    return GatewayError(
        f"Request {entry.seq} was not sent: it is {entry.state.value} in the outbox"
        + (f" ({entry.reason})" if entry.reason else "")
        + "."
    )


def attempt_from(envelope: SendEnvelope, attempts: int) -> Attempt:
    """What a REST send's answer says it lodged."""
    data = envelope.data
    if data.message is None and data.batch_code is None:
        error = GatewayError(
            "The gateway accepted the send but named neither a message nor a batch."
        )
        return Attempt(attempts=attempts, error=error)
    messages = (data.message,) if data.message is not None else ()
    return Attempt(messages, batch_code=data.batch_code, attempts=attempts)


def unsettled(
    entry: OutboxEntry, cause: GatewayError, last: GatewayError | None
) -> AmbiguousSendError:
    """A lost answer the status query that would settle it could not be made for."""
    why = f" ({last.message})" if last is not None else ""
    return AmbiguousSendError(
        f"The gateway may or may not have lodged the message ({cause.message}), and the status "
        f"query that would tell could not be made{why}. Check the status of ExternalSystemId "
        f"{entry.external_system_id} before sending again.",
        external_system_id=entry.external_system_id,
        recipients=entry.recipients,
    )
