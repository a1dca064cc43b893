"""What the durable outbox holds, as values, and how its rows are read back.

`outbox.OutboxStore` writes and moves the rows; this module is the other half: the
states, the batch and entry values callers get, and the decoding of rows that may
have been edited or damaged (never an exception: a `damaged` reason instead). Rows
come from either engine (a profile's file, a team's server), read by column name.
The errors the outbox's changes raise are here too, so each half can raise them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from gwdesk.store.database import StoreError


class OutboxError(StoreError):
    """The outbox refused a change; the message says why (nothing was sent)."""


class OutboxBusy(OutboxError):
    """Another running gwdesk (or another window of this one) is sending the batch."""


class TransitionError(OutboxError):
    """An entry was not in a state the change may start from (it moved meanwhile)."""

    def __init__(self, entry_id: int, wanted: EntryState, found: str | None) -> None:
        where = f"it is {found}" if found is not None else "it does not exist"
        super().__init__(f"Outbox entry {entry_id} cannot become {wanted.value}: {where}.")
        self.entry_id = entry_id
        self.found = found


class EntryState(StrEnum):
    PENDING = "pending"
    IN_FLIGHT = "in_flight"
    LODGED = "lodged"
    FAILED = "failed"
    UNKNOWN = "unknown"


UNREADABLE_TIME: Final = -1
"""A held batch's time that cannot be read (see `OutboxBatch.held_until_us`)."""
#: Entries that still need something done: sending, or learning whether they were lodged.
OPEN_STATES: Final = (EntryState.PENDING, EntryState.IN_FLIGHT, EntryState.UNKNOWN)
SMS: Final = "sms"
"""The REST channel: the only one with ExternalSystemIds, so the only one reconciled."""
BATCH_SELECT: Final = (
    "SELECT id, send_id, gateway, channel, label, baseline, excluded, created_us, updated_us, closed, "
    "owner, operator, held_until_us, recurrence FROM outbox_batches "
)
COUNT_SELECT: Final = (
    "SELECT batch_id, state, COUNT(*), COALESCE(SUM(recipient_count), 0) FROM outbox_entries"
)
ENTRY_SELECT: Final = (
    "SELECT e.*, b.channel AS channel, (SELECT COUNT(*) FROM outbox_entries s "
    "WHERE s.external_system_id = e.external_system_id) AS sharing "
    "FROM outbox_entries e JOIN outbox_batches b ON b.id = e.batch_id"
)


@dataclass(frozen=True, slots=True)
class NewEntry:
    """One request of a batch about to be recorded."""

    seq: int
    recipients: tuple[str, ...]
    body: Mapping[str, Any]
    """What the request carries besides its recipients (message, options, or a
    description of a Lodge request), as JSON-ready values."""
    external_system_id: str | None = None
    own_id: bool = True
    """The ExternalSystemId was generated for this request alone (not the operator's)."""


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    id: int
    batch_id: int
    seq: int
    channel: str
    external_system_id: str | None
    own_id: bool
    recipients: tuple[str, ...]
    recipient_count: int
    body: Mapping[str, Any]
    state: EntryState
    attempts: int
    message_id: str | None
    batch_code: str | None
    found: int
    reason: str
    error_kind: str | None
    retryable: bool
    created_us: int
    updated_us: int
    sent_us: int | None
    sharing: int = 1
    """Entries holding this ExternalSystemId (more than 1 only in a damaged file, or for
    an operator's own id)."""
    damaged: str = ""
    """Why the row cannot be used as it is ('' when it can)."""


@dataclass(frozen=True, slots=True)
class StateCount:
    entries: int = 0
    recipients: int = 0


@dataclass(frozen=True, slots=True)
class OutboxBatch:
    id: int
    send_id: str
    gateway: str
    channel: str
    label: str
    created_us: int
    updated_us: int
    closed: bool
    owner: str | None
    baseline: frozenset[str] = frozenset()
    counts: Mapping[EntryState, StateCount] = field(default_factory=dict)
    excluded: tuple[str, ...] = ()
    """Numbers left out because they had opted out (when recorded, or before a request)."""
    operator: str = ""
    """Who recorded the send (a team's operator name; '' when none was given)."""
    held_until_us: int | None = None
    """A scheduled send gwdesk holds: not sent before this time (UTC µs); None: not held."""
    recurrence: str = ""
    """A recurring send's rule as kept (JSON, `domain.recurrence`); '' for a one-off."""

    def count(self, *states: EntryState) -> int:
        return sum(self.counts.get(s, StateCount()).entries for s in states)

    def recipients_in(self, *states: EntryState) -> int:
        return sum(self.counts.get(s, StateCount()).recipients for s in states)

    @property
    def entries(self) -> int:
        return self.count(*EntryState)

    @property
    def recipients(self) -> int:
        return self.recipients_in(*EntryState)


def body_json(body: Mapping[str, Any]) -> str:
    """A request's body as the outbox keeps it."""
    return json.dumps(dict(body), ensure_ascii=False, default=str)


def state_of(value: object) -> EntryState | None:
    """The state a row names, or None for one gwdesk does not know (a damaged row)."""
    try:
        return EntryState(str(value))
    except ValueError:
        return None


def _strings(text: object) -> tuple[str, ...]:
    """A JSON list of strings; () when it cannot be read."""
    try:
        loaded = json.loads(str(text or "[]"))
    except (json.JSONDecodeError, TypeError):
        return ()
    return tuple(str(v) for v in loaded) if isinstance(loaded, list) else ()


def batch_from_row(row: Any, counts: Mapping[EntryState, StateCount]) -> OutboxBatch:
    """A batch row with its counts; a list that cannot be read is taken as empty."""
    return OutboxBatch(
        id=int(row["id"]),
        send_id=str(row["send_id"]),
        gateway=str(row["gateway"]),
        channel=str(row["channel"]),
        label=str(row["label"] or ""),
        created_us=int(row["created_us"] or 0),
        updated_us=int(row["updated_us"] or 0),
        closed=bool(row["closed"]),
        owner=row["owner"] if isinstance(row["owner"], str) else None,
        baseline=frozenset(_strings(row["baseline"])),
        counts=dict(counts),
        excluded=_strings(row["excluded"]),
        operator=str(row["operator"] or ""),
        held_until_us=_held(row["held_until_us"]),
        recurrence=str(row["recurrence"] or ""),
    )


def _held(value: object) -> int | None:
    """A held batch's time; -1 for a value that is not a whole number (a damaged row: the
    clock never sends it, as SQL ranks text above every number; the operator sees it in
    the scheduled list and sends or cancels it)."""
    if value is None:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else UNREADABLE_TIME


def entry_from_row(row: Any) -> OutboxEntry:
    """An entry row; what cannot be read is said in `damaged`, so it is never sent."""
    problems: list[str] = []
    recipients: tuple[str, ...] = ()
    try:
        loaded = json.loads(row["recipients"])
        if isinstance(loaded, list) and loaded and all(isinstance(v, str) for v in loaded):
            recipients = tuple(loaded)
        else:
            problems.append("its recipients are not a list of numbers")
    except (json.JSONDecodeError, TypeError):
        problems.append("its recipients cannot be read")
    body: Mapping[str, Any] = {}
    try:
        loaded_body = json.loads(row["body"])
        if isinstance(loaded_body, dict):
            body = loaded_body
        else:
            problems.append("its message and options are not a JSON object")
    except (json.JSONDecodeError, TypeError):
        problems.append("its message and options cannot be read")
    state = state_of(row["state"])
    if state is None:
        problems.append(f"its state {str(row['state'])[:20]!r} is not one gwdesk knows")
        state = EntryState.UNKNOWN
    external = row["external_system_id"]
    if row["channel"] == SMS and not isinstance(external, str):
        problems.append("it has no ExternalSystemId")
    return OutboxEntry(
        id=int(row["id"]),
        batch_id=int(row["batch_id"]),
        seq=int(row["seq"]),
        channel=str(row["channel"]),
        external_system_id=external if isinstance(external, str) else None,
        own_id=bool(row["own_id"]),
        recipients=recipients,
        recipient_count=int(row["recipient_count"] or len(recipients)),
        body=body,
        state=state,
        attempts=int(row["attempts"] or 0),
        message_id=row["message_id"],
        batch_code=row["batch_code"],
        found=int(row["found"] or 0),
        reason=str(row["reason"] or ""),
        error_kind=row["error_kind"],
        retryable=bool(row["retryable"]),
        created_us=int(row["created_us"] or 0),
        updated_us=int(row["updated_us"] or 0),
        sent_us=int(row["sent_us"]) if row["sent_us"] is not None else None,
        sharing=int(row["sharing"] or 1),
        damaged="; ".join(problems),
    )
