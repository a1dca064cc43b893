"""The way out: every request is an outbox entry, and this runner sends them.

Every message gwdesk sends (a single SMS, a batch of 100,000, an MMS, a fax, a WAP
push, a conversation's reply; from the console or the command line) is recorded
first, then sent by `OutboxRunner.run`, the only code that makes a send request:

1. the whole send is recorded (`record_sms`, `record_lodge`): one pending entry per
   request (at most 100 recipients of a REST send, each with its ExternalSystemId, or
   one Lodge request), in one transaction;
2. the runner claims the batch (another gwdesk leaves it alone), and its lanes take
   entries one at a time: each is marked in flight (committed) just before its
   request leaves, and its outcome is recorded when known: lodged, failed (with the
   reason), or unknown when the answer was lost and could not be settled;
3. cancelling lets the requests on the wire finish (their outcome is then known) and
   no lane takes another; a refusal every other request would meet too (the login,
   the message) halts it the same way. What was not sent stays pending, with why.

A REST request whose answer is lost (a read time-out, a dropped connection, a 5xx
other than 503, an unreadable body) may or may not have been lodged, so the runner
asks `status?external_system_id=` for a short, bounded window (a batch's messages
appear in the background): messages found mean it was lodged; still nothing at the
end means it surely was not, and it is sent again with the same ExternalSystemId.
It is never resent blindly. `settle` does the same for an entry a crash left in
flight (see `gwdesk.app.recovery`). Lodge requests carry no ExternalSystemId: the
caller hands the runner the call to make, and one whose answer is lost stays unknown
for the operator to check.

The entries the runner hands out (`RequestOutcome.entry`, `on_change`) are the outbox's own
rows: one state model for a send, which the Batch tab shows as it is. Database work
runs on worker threads, in short transactions (the lanes' changes in commit groups,
`outbox_groups.py`: one thread hand-off and one transaction for those of a moment), so
neither the event loop (the console's GUI thread) nor a transaction waits on the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, ParamSpec, TypeVar

from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.outbox_groups import CommitGroups
from gwdesk.app.send_values import (
    CANCELLED,
    MAX_LANES,
    SETTLED_BY_STATUS,
    Attempt,
    Changed,
    RequestOutcome,
    RunReport,
    StoreAwayError,
    Transmit,
    attempt_from,
    chunk_id,
    halts_everything,
    new_send_id,
    not_attempted,
    not_pending,
    ours,
    recipient_digits,
    retryable,
    unsettled,
)
from gwdesk.app.sms import SmsMessage
from gwdesk.domain.errors import (
    AmbiguousSendError,
    GatewayError,
    TransientError,
    ValidationError,
)
from gwdesk.domain.models import Message
from gwdesk.domain.wire_time import epoch_us
from gwdesk.gateway.service import (
    Deadline,
    GatewayService,
    doubling,
    retryable_idempotent,
    retryable_send,
)
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import (
    SMS,
    EntryState,
    NewEntry,
    OutboxBatch,
    OutboxEntry,
    OutboxStore,
    Step,
)

log = logging.getLogger("gwdesk.app.outbox")
T = TypeVar("T")
P = ParamSpec("P")


@dataclass
class _Run:
    queue: list[OutboxEntry]
    halted: str = ""
    cause: GatewayError | None = None
    """The refusal that halted the run."""
    sent: dict[int, RequestOutcome] = field(default_factory=dict)


@dataclass(eq=False, repr=False)
class OutboxRunner:
    """One profile's outbox and gateway: every send of it (see the module docstring)."""

    gateway: GatewayService
    outbox: OutboxStore
    account: str
    """Which gateway account the batches belong to: only that one resumes them."""
    _: KW_ONLY
    guard: OptOutGuard | None = None
    """The account's opt-out list, asked again just before each REST request leaves."""
    clock: Callable[[], float] = time.monotonic
    _groups: CommitGroups = field(init=False)
    """The lanes' outbox changes, written in commit groups (`outbox_groups.py`)."""

    def __post_init__(self) -> None:
        self._groups = CommitGroups(lambda: (self.outbox, self.guard))

    def __repr__(self) -> str:
        return f"OutboxRunner(account={self.account!r}, outbox={self.outbox!r})"

    async def db(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """A store call on a worker thread: it may wait out another process's write lock."""
        return await asyncio.to_thread(functools.partial(call, *args, **kwargs))

    async def change(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """A change of the outbox's (its methods only), in the runner's next commit group:
        one commit with the other sends' changes of the moment (`outbox_groups.py`)."""
        return await self._groups.call(functools.partial(call, *args, **kwargs))

    # ---- recording ---------------------------------------------------------------------

    async def record_sms(
        self,
        parts: Sequence[tuple[SmsMessage, Sequence[str]]],
        *,
        label: str,
        excluded: Sequence[str] = (),
        held_until: datetime | None = None,
        recurrence: str = "",
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a REST send: one pending entry per (message, at most 100 recipients);
        held until `held_until` when given (a scheduled send, recurring by `recurrence`:
        `scheduled.py`).

        Each entry gets its own ExternalSystemId, unless the operator gave one, which
        every entry then shares; the messages that id already named before this send
        are noted first (one status query) and never taken as this send's.
        """
        send_id = new_send_id()
        baseline: set[str] = set()
        for given in {m.external_id for m, _ in parts if m.external_id}:
            found = await self.gateway.status(external_system_id=given)
            baseline.update(m.message_id for m in found)
        entries = [
            NewEntry(
                seq,
                tuple(recipients),
                message.to_json(),
                message.external_id or chunk_id(send_id, seq),
                own_id=not message.external_id,
            )
            for seq, (message, recipients) in enumerate(parts, start=1)
        ]
        return await self._record(
            gateway=self.account,
            channel=SMS,
            label=_label(label),
            send_id=send_id,
            entries=entries,
            baseline=baseline,
            excluded=excluded,
            held_until_us=None if held_until is None else epoch_us(held_until),
            recurrence=recurrence,
        )

    async def record_lodge(
        self, channel: str, recipients: Sequence[str], description: Mapping[str, Any]
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record one Lodge request (MMS, fax, Lodge SMS, WAP push). Only its description
        is kept (not its files): an interrupted one is left for the operator to check."""
        label = str(description.get("label") or description.get("text") or channel)
        return await self._record(
            gateway=self.account,
            channel=channel,
            label=_label(label),
            send_id=f"{new_send_id()}-{channel}",
            entries=[NewEntry(1, tuple(recipients), description, None, own_id=False)],
        )

    async def _record(self, **send: Any) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """`outbox.record`, off the loop; `StoreAwayError` when the store cannot take it."""
        try:
            return await self.change(self.outbox.record, **send)
        except StoreError as exc:
            raise StoreAwayError("The outbox cannot record the send", exc) from exc

    async def reopen(
        self, entry_ids: Sequence[int], message: SmsMessage | None
    ) -> list[OutboxEntry]:
        """Failed or pending entries made ready to send `message` ("Send remaining" with
        the message as it is now; None: each its own, as recorded); the entries now
        pending."""
        body = None if message is None else message.to_json()

        def work() -> list[OutboxEntry]:
            opened = self.outbox.reopen(entry_ids, body)
            found = [self.outbox.entry(entry_id) for entry_id in opened]
            return [e for e in found if e is not None]

        return await self.change(work)

    # ---- claims ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def claimed(self, batch_id: int) -> AsyncIterator[None]:
        """Hold a batch while sending or settling it (`OutboxBusy` when someone else does).

        Claiming and releasing are writes, which wait out SQLite's busy timeout while
        another connection holds the file's write lock, so they run on a worker thread
        (not in a commit group: a claim holds the outbox's own lock while it waits for
        the file's, which a group holds first).
        Cancelling cannot leave a claim behind: neither write is cancelled once started,
        and a claim that lands after its waiter was cancelled is released.
        """
        loop = asyncio.get_running_loop()
        claim = loop.run_in_executor(None, self.outbox.claim, batch_id)
        try:
            await asyncio.shield(claim)
        except asyncio.CancelledError:
            claim.add_done_callback(functools.partial(self._release_late, batch_id))
            raise
        try:
            yield
        finally:
            await asyncio.shield(loop.run_in_executor(None, self.outbox.release, batch_id))

    def _release_late(self, batch_id: int, claim: asyncio.Future[None]) -> None:
        if claim.cancelled() or claim.exception() is not None:
            return
        asyncio.get_running_loop().run_in_executor(None, self.outbox.release, batch_id)

    # ---- running -----------------------------------------------------------------------

    async def run(
        self,
        batch: OutboxBatch,
        entries: Sequence[OutboxEntry],
        *,
        transmit: Transmit | None = None,
        lanes: int = 1,
        stop: asyncio.Event | None = None,
        on_change: Changed | None = None,
        claim: bool = True,
        screened: bool = False,
    ) -> RunReport:
        """Send pending `entries` of `batch`, `lanes` at a time, under the batch's claim
        (taken here, unless `claim` is False: the caller holds it).

        `transmit` makes a Lodge entry's call; REST entries are sent by the runner. An
        entry that is no longer pending is not sent: its row comes back as it is (so a
        stale view cannot send twice). Every change of an entry's row is passed to
        `on_change` (on the event loop's thread), in flight first, then its outcome.
        Each REST entry's recipients are looked up in the opt-out list just before its
        request leaves, unless `screened`: the caller looked them up itself a moment ago,
        just before recording them (a single send reads the list once).
        """
        run = _Run(list(reversed(entries)))
        tell = on_change or (lambda _entry: None)
        send = transmit or self.transmit_sms

        async def lane() -> None:
            while run.queue and not run.halted and not (stop and stop.is_set()):
                entry = run.queue.pop()
                sent = await self._send_entry(batch, entry, send, tell, screened)
                run.sent[entry.id] = sent
                tell(sent.entry)
                if sent.error is not None and halts_everything(sent.error):
                    run.halted, run.cause = sent.error.message, sent.error

        async with self.claimed(batch.id) if claim else contextlib.nullcontext():
            count = max(1, min(lanes, MAX_LANES, len(run.queue) or 1))
            async with asyncio.TaskGroup() as group:  # one lane failing stops the others
                for _ in range(count):
                    group.create_task(lane())
        # Cut off (the task cancelled) the entries stay as the file has them; stopped or
        # halted, those no lane took stay pending and say why.
        cancelled = bool(stop and stop.is_set()) and not run.halted
        await self._leave_pending(run, cancelled, tell)
        ordered = tuple(run.sent[e.id] for e in entries if e.id in run.sent)
        return RunReport(batch, ordered, run.halted, cancelled)

    async def _leave_pending(self, run: _Run, cancelled: bool, tell: Changed) -> None:
        """Entries no lane took stay pending, with why they were not sent."""
        if not run.queue:
            return
        why = f"not sent: {run.halted}" if run.halted else CANCELLED if cancelled else ""
        left = list(reversed(run.queue))
        run.queue.clear()
        if why:
            with contextlib.suppress(StoreError):
                await self.change(self.outbox.note, [e.id for e in left], why)
        for entry in left:
            held = replace(entry, reason=why) if why else entry
            error = not_attempted(run.cause) if run.cause else GatewayError(why or "not sent")
            run.sent[entry.id] = RequestOutcome(held, error=error)
            tell(held)

    async def _send_entry(
        self,
        batch: OutboxBatch,
        entry: OutboxEntry,
        transmit: Transmit,
        tell: Changed,
        screened: bool = False,
    ) -> RequestOutcome:
        if entry.damaged:
            reason = (
                f"The outbox record of this request is damaged ({entry.damaged}); it was not sent."
            )
            return RequestOutcome(await self._give_up(entry, reason), error=GatewayError(reason))
        screen = self.guard is not None and entry.channel == SMS and not screened
        # The opt-out look-up, any exclusion and the in-flight mark: one commit group's.
        before = await self._groups.begin(entry, screen=screen and not entry.body.get("factual"))
        if before.error is not None:
            return RequestOutcome(before.entry, error=before.error)
        current = before.entry
        if not before.started:
            return RequestOutcome(current, error=not_pending(current))
        tell(current)
        attempt = await transmit(batch, current)
        return await self._finish(current, attempt)

    async def _give_up(self, entry: OutboxEntry, reason: str) -> OutboxEntry:
        with contextlib.suppress(StoreError):
            return await self.change(self.outbox.give_up, entry.id, reason)
        return replace(entry, state=EntryState.FAILED, reason=reason)

    async def _finish(self, entry: OutboxEntry, attempt: Attempt) -> RequestOutcome:
        """Record what became of a request. A store failure leaves it in flight in the
        file (settled on the next start); the caller still learns the outcome."""
        error = attempt.error
        first = attempt.messages[0] if attempt.messages else None
        if error is None:
            state = EntryState.LODGED
            values: dict[str, Any] = dict(
                message_id=first.message_id if first else attempt.message_id,
                batch_code=attempt.batch_code,
                found=len(attempt.messages) or (1 if attempt.message_id else 0),
                reason=SETTLED_BY_STATUS if attempt.resolved else attempt.detail,
            )
            name: Literal["lodged", "unknown", "failed"] = "lodged"
        elif error.maybe_processed:
            state, values, name = EntryState.UNKNOWN, dict(reason=error.message), "unknown"
        else:
            state = EntryState.FAILED
            values = dict(
                reason=error.message,
                error_kind=error.kind,
                retryable=retryable(error) and entry.channel == SMS,
            )
            name = "failed"
        try:
            now = await self._groups.record(Step(name, entry.id, values))
        except StoreError as exc:
            log.warning("outbox entry %d: outcome not recorded: %s", entry.id, exc)
            now = replace(entry, state=state, **values)
        return RequestOutcome(
            now, attempt.messages, attempt.resolved, attempt.attempts, error, attempt.answer
        )

    # ---- the REST request, exactly once ------------------------------------------------

    async def transmit_sms(self, batch: OutboxBatch, entry: OutboxEntry) -> Attempt:
        """One REST request, repeated only when it surely was not lodged: the gateway
        refused it before any work (`retryable_send`), or its answer was lost and the
        status window then showed none of its messages (sent again at once, with the
        same ExternalSystemId: it cannot make a second copy)."""
        external_id = entry.external_system_id or ""
        try:
            body = SmsMessage.from_json(entry.body).rest_body(entry.recipients, external_id)
        except ValueError as exc:
            reason = f"The outbox record of this request cannot be sent ({exc})."
            return Attempt(error=ValidationError(reason, field=None, status=None))
        tries = 0

        async def once() -> Attempt:
            nonlocal tries
            tries += 1
            try:
                envelope = await self.gateway.send_once(body)
            except GatewayError as exc:
                if not exc.maybe_processed:
                    raise
                log.info("request %s: answer lost (%s); asking status", external_id, exc.message)
                found = await self._resolve(batch, entry, exc)
                if not found:
                    raise _NotLodged(exc) from exc
                return Attempt(found, resolved=True, attempts=tries)
            return attempt_from(envelope, tries)

        try:
            return await self.gateway.retry(
                once,
                what=f"request {external_id}",
                retryable=retryable_send,
                attempts=self.gateway.retry_policy.send_attempts,
                at_once=_NotLodged.caught,
            )
        except AmbiguousSendError as unknown:  # the status query that would tell failed
            return Attempt(attempts=tries, error=unknown)
        except _NotLodged as exc:
            last = exc.cause
            error = TransientError(
                f"The gateway did not lodge the message after {tries} tries "
                f"(last: {last.message}).",
                status=last.status,
            )
            return Attempt(attempts=tries, error=error)
        except GatewayError as exc:
            log.warning("request %d (%s) failed: %s", entry.seq, external_id, exc.message)
            return Attempt(attempts=tries, error=exc)

    async def _resolve(
        self, batch: OutboxBatch, entry: OutboxEntry, cause: GatewayError
    ) -> tuple[Message, ...]:
        """Messages this request lodged, or () once the window shows it lodged nothing;
        `AmbiguousSendError` when the gateway could not be asked in the window (a look
        that failed is looked again past the window's end, up to twice the policy's
        attempts in all: the window ends with an answer)."""
        external_id = entry.external_system_id or ""
        policy = self.gateway.retry_policy
        deadline = Deadline.after(policy.resolve_window, self.clock)
        wanted = None if entry.own_id else recipient_digits(entry.recipients)
        failures = 0

        async def look() -> tuple[Message, ...]:
            nonlocal failures
            try:
                messages = await self.gateway.status_once(external_system_id=external_id)
            except GatewayError as exc:
                if not retryable_idempotent(exc):
                    raise unsettled(entry, cause, exc) from None
                failures += 1
                if deadline.left() <= 0 and failures >= policy.attempts * 2:
                    raise unsettled(entry, cause, None) from None
                raise _Unanswered(exc) from exc
            return _mine(messages, batch, wanted)

        try:
            return await self.gateway.retry(
                look,
                what=f"status of request {external_id}",
                retryable=_Looking.caught,
                deadline=deadline,
                waits=doubling(policy.resolve_first_delay, policy.resolve_max_delay),
                outlives_deadline=_Unanswered.caught,
            )
        except _NotYet:
            log.info("request %s: not lodged; sending it again", external_id)
            return ()

    async def lodged_by_status(
        self, batch: OutboxBatch, entry: OutboxEntry
    ) -> tuple[Message, ...] | None:
        """For an entry a crash or a lost answer left open: its messages when the gateway
        has them, () when queries spanning the whole resolve window found none (it was
        not lodged), None when the gateway could not be asked (`GatewayError` raised)."""
        external_id = entry.external_system_id or ""
        wanted = None if entry.own_id else recipient_digits(entry.recipients)
        policy = self.gateway.retry_policy

        async def look() -> tuple[Message, ...]:
            messages = await self.gateway.status(external_system_id=external_id)
            return _mine(messages, batch, wanted)

        try:
            # Looked for over a whole window now, however long ago it was sent: a gateway
            # that was down or restarted may still be loading the batch it accepted.
            return await self.gateway.retry(
                look,
                what=f"status of request {external_id}",
                retryable=_NotYet.caught,
                deadline=Deadline.after(policy.resolve_window, self.clock),
                waits=doubling(policy.resolve_first_delay, policy.resolve_max_delay),
            )
        except _NotYet:
            return ()


class _Marker(GatewayError):
    """What a try of the runner's own loops came to, told to the retry loop."""

    @classmethod
    def caught(cls, error: GatewayError) -> bool:
        return isinstance(error, cls)


class _Looking(_Marker):
    """A status look that did not find the request's messages: looked again in the window."""


class _NotYet(_Looking):
    """The gateway answered, with none of the request's messages (yet)."""

    def __init__(self) -> None:
        super().__init__("none of its messages found yet")


class _Unanswered(_Looking):
    """The status query itself failed in a way that may pass."""

    def __init__(self, cause: GatewayError) -> None:
        super().__init__(cause.message, status=cause.status)


class _NotLodged(_Marker):
    """A request whose answer was lost, proved not lodged by the status window."""

    def __init__(self, cause: GatewayError) -> None:
        super().__init__(f"not lodged ({cause.message})", status=cause.status)
        self.cause = cause


def _mine(
    messages: Sequence[Message], batch: OutboxBatch, wanted: set[str] | None
) -> tuple[Message, ...]:
    """The request's own messages among those a status query answered (`_NotYet`: none)."""
    found = ours(messages, batch.baseline, wanted)
    if not found:
        raise _NotYet()
    return found


def _label(text: str) -> str:
    return " ".join(text.split())[:80]
