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

The entries the runner hands out (`Sent.entry`, `on_change`) are the outbox's own
rows: one state model for a send, which the Batch tab shows as it is. Database work
runs on worker threads, one short transaction each, so neither the event loop (the
console's GUI thread) nor a transaction waits on the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ParamSpec, TypeVar

from gwdesk.app.optouts import OptOutGuard
from gwdesk.app.send_values import (
    CANCELLED,
    MAX_LANES,
    SETTLED_BY_STATUS,
    Attempt,
    Changed,
    RunReport,
    Sent,
    StoreAwayError,
    Transmit,
    chunk_id,
    halts_everything,
    new_send_id,
    not_attempted,
    ours,
    recipient_digits,
    retryable,
)
from gwdesk.app.sms import SmsMessage
from gwdesk.domain.errors import (
    AmbiguousSendError,
    GatewayError,
    TransientError,
    ValidationError,
)
from gwdesk.domain.models import Message, SendEnvelope
from gwdesk.gateway.retry import retryable_idempotent, retryable_send
from gwdesk.gateway.service import GatewayService
from gwdesk.store.database import StoreError
from gwdesk.store.outbox import (
    SMS,
    EntryState,
    NewEntry,
    OutboxBatch,
    OutboxEntry,
    OutboxStore,
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
    sent: dict[int, Sent] = field(default_factory=dict)


class OutboxRunner:
    """One profile's outbox and gateway: every send of it (see the module docstring)."""

    def __init__(
        self,
        gateway: GatewayService,
        outbox: OutboxStore,
        account: str,
        *,
        guard: OptOutGuard | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.gateway = gateway
        self.outbox = outbox
        self.account = account
        """Which gateway account the batches belong to: only that one resumes them."""
        self.guard = guard
        """The account's opt-out list, asked again just before each REST request leaves."""
        self.clock = clock

    def __repr__(self) -> str:
        return f"OutboxRunner(account={self.account!r}, outbox={self.outbox!r})"

    async def db(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """A store call on a worker thread: it may wait out another process's write lock."""
        return await asyncio.to_thread(functools.partial(call, *args, **kwargs))

    # ---- recording ---------------------------------------------------------------------

    async def record_sms(
        self,
        parts: Sequence[tuple[SmsMessage, Sequence[str]]],
        *,
        label: str,
        excluded: Sequence[str] = (),
    ) -> tuple[OutboxBatch, list[OutboxEntry]]:
        """Record a REST send: one pending entry per (message, at most 100 recipients).

        Each entry gets its own ExternalSystemId, unless the operator gave one, which
        every entry then shares; the messages that id already named before this send
        are noted first (one status query) and never taken as this send's.
        """
        send_id = new_send_id()
        baseline: set[str] = set()
        for given in {m.external_id for m, _ in parts if m.external_id}:
            found = await self.gateway.rest.status(external_system_id=given)
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
            return await self.db(self.outbox.record, **send)
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

        return await self.db(work)

    # ---- claims ------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def claimed(self, batch_id: int) -> AsyncIterator[None]:
        """Hold a batch while sending or settling it (`OutboxBusy` when someone else does).

        Claiming and releasing are writes, which wait out SQLite's busy timeout while
        another connection holds the file's write lock, so they run on a worker thread.
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
                await self.db(self.outbox.note, [e.id for e in left], why)
        for entry in left:
            held = replace(entry, reason=why) if why else entry
            error = not_attempted(run.cause) if run.cause else GatewayError(why or "not sent")
            run.sent[entry.id] = Sent(held, error=error)
            tell(held)

    async def _send_entry(
        self,
        batch: OutboxBatch,
        entry: OutboxEntry,
        transmit: Transmit,
        tell: Changed,
        screened: bool = False,
    ) -> Sent:
        if entry.damaged:
            reason = (
                f"The outbox record of this request is damaged ({entry.damaged}); it was not sent."
            )
            return Sent(await self._give_up(entry, reason), error=GatewayError(reason))
        screen = self.guard is not None and entry.channel == SMS and not screened
        if screen and not entry.body.get("factual"):
            try:
                entry = await self._screen(entry)
            except StoreError as exc:
                reason = f"The opt-out list could not be read ({exc}), so it was not sent."
                return Sent(entry, error=GatewayError(reason))
            if entry.state is EntryState.FAILED:
                refused = ValidationError(entry.reason, field="Recipients", status=None)
                return Sent(entry, error=refused)
        try:
            started, current = await self.db(self.outbox.begin, entry.id)
        except StoreError as exc:
            reason = f"The outbox could not record this request ({exc}), so it was not sent."
            return Sent(entry, error=GatewayError(reason))
        if not started:
            return Sent(current, error=_not_pending(current))
        tell(current)
        attempt = await transmit(batch, current)
        return await self._finish(current, attempt)

    async def _screen(self, entry: OutboxEntry) -> OutboxEntry:
        """Leave out whoever opted out since the entry was recorded (a STOP that came
        while a long batch was going, or before it was resumed)."""
        assert self.guard is not None
        found = await self.guard.lookup(entry.recipients)
        if not found or entry.state is not EntryState.PENDING:
            return entry
        count = len(found)
        if count == len(set(entry.recipients)):
            reason = (
                "Every recipient of this request has opted out since it was recorded; not sent."
            )
        else:
            reason = f"{count} recipient(s) opted out since it was recorded and were left out."
        log.info("request %d: %s", entry.seq, reason)
        return await self.db(self.outbox.exclude, entry.id, set(found), reason)

    async def _give_up(self, entry: OutboxEntry, reason: str) -> OutboxEntry:
        with contextlib.suppress(StoreError):
            return await self.db(self.outbox.give_up, entry.id, reason)
        return replace(entry, state=EntryState.FAILED, reason=reason)

    async def _finish(self, entry: OutboxEntry, attempt: Attempt) -> Sent:
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
            record: Callable[..., OutboxEntry] = self.outbox.lodged
        elif error.maybe_processed:
            state, values, record = (
                EntryState.UNKNOWN,
                dict(reason=error.message),
                self.outbox.unknown,
            )
        else:
            state = EntryState.FAILED
            values = dict(
                reason=error.message,
                error_kind=error.kind,
                retryable=retryable(error) and entry.channel == SMS,
            )
            record = self.outbox.failed
        try:
            now = await self.db(record, entry.id, **values)
        except StoreError as exc:
            log.warning("outbox entry %d: outcome not recorded: %s", entry.id, exc)
            now = replace(entry, state=state, **values)
        return Sent(
            now, attempt.messages, attempt.resolved, attempt.attempts, error, attempt.answer
        )

    # ---- the REST request, exactly once ------------------------------------------------

    async def transmit_sms(self, batch: OutboxBatch, entry: OutboxEntry) -> Attempt:
        """One REST request, repeated only when it surely was not lodged."""
        external_id = entry.external_system_id or ""
        try:
            body = SmsMessage.from_json(entry.body).rest_body(entry.recipients, external_id)
        except ValueError as exc:
            reason = f"The outbox record of this request cannot be sent ({exc})."
            return Attempt(error=ValidationError(reason, field=None, status=None))
        rest, retrier = self.gateway.rest, self.gateway.retrier
        attempt = 0
        while True:
            attempt += 1
            try:
                envelope = await rest.send_once(body)
            except GatewayError as exc:
                if exc.maybe_processed:
                    log.info(
                        "request %s: answer lost (%s); asking status", external_id, exc.message
                    )
                    try:
                        found = await self._resolve(batch, entry, exc)
                    except AmbiguousSendError as unknown:
                        return Attempt(attempts=attempt, error=unknown)
                    if found:
                        return Attempt(found, resolved=True, attempts=attempt)
                    if attempt >= retrier.policy.send_attempts:
                        return Attempt(
                            attempts=attempt,
                            error=TransientError(
                                f"The gateway did not lodge the message after {attempt} tries "
                                f"(last: {exc.message}).",
                                status=exc.status,
                            ),
                        )
                    continue  # surely not lodged: sending again cannot make a second copy
                wait = retrier.delay_for(exc, attempt)
                if (
                    not retryable_send(exc)
                    or attempt >= retrier.policy.send_attempts
                    or wait is None
                ):
                    log.warning("request %d (%s) failed: %s", entry.seq, external_id, exc.message)
                    return Attempt(attempts=attempt, error=exc)
                await retrier.sleep(wait)
                continue
            return _from_envelope(envelope, attempt)

    async def _resolve(
        self, batch: OutboxBatch, entry: OutboxEntry, cause: GatewayError
    ) -> tuple[Message, ...]:
        """Messages this request lodged, or () once the window shows it lodged nothing;
        `AmbiguousSendError` when the gateway could not be asked in the window."""
        external_id = entry.external_system_id or ""
        policy = self.gateway.retrier.policy
        deadline = self.clock() + policy.resolve_window
        delay = policy.resolve_first_delay
        wanted = None if entry.own_id else recipient_digits(entry.recipients)
        failures = 0
        while True:
            answered = False
            try:
                messages = await self.gateway.rest.status_once(external_system_id=external_id)
                answered = True
            except GatewayError as exc:
                if not retryable_idempotent(exc):
                    raise _ambiguous(entry, cause, exc) from None
                failures += 1
                messages = []
            mine = ours(messages, batch.baseline, wanted)
            if mine:
                return mine
            now = self.clock()
            if now >= deadline:
                if answered:
                    log.info("request %s: not lodged; sending it again", external_id)
                    return ()
                if failures >= policy.attempts * 2:
                    raise _ambiguous(entry, cause, None)
            await self.gateway.retrier.sleep(min(delay, max(0.0, deadline - now)) or delay)
            delay = min(delay * 2, policy.resolve_max_delay)

    async def lodged_by_status(
        self, batch: OutboxBatch, entry: OutboxEntry
    ) -> tuple[Message, ...] | None:
        """For an entry a crash or a lost answer left open: its messages when the gateway
        has them, () when queries spanning the whole resolve window found none (it was
        not lodged), None when the gateway could not be asked (`GatewayError` raised)."""
        external_id = entry.external_system_id or ""
        wanted = None if entry.own_id else recipient_digits(entry.recipients)
        policy = self.gateway.retrier.policy
        # Looked for over a whole window now, however long ago it was sent: a gateway
        # that was down or restarted may still be loading the batch it accepted.
        deadline = self.clock() + policy.resolve_window
        delay = policy.resolve_first_delay
        while True:
            messages = await self.gateway.rest.status(external_system_id=external_id)
            mine = ours(messages, batch.baseline, wanted)
            if mine:
                return mine
            now = self.clock()
            if now >= deadline:
                return ()
            await self.gateway.retrier.sleep(min(delay, deadline - now))
            delay = min(delay * 2, policy.resolve_max_delay)


def _label(text: str) -> str:
    return " ".join(text.split())[:80]


def _not_pending(entry: OutboxEntry) -> GatewayError | None:
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


def _from_envelope(envelope: SendEnvelope, attempts: int) -> Attempt:
    data = envelope.data
    if data.message is None and data.batch_code is None:
        error = GatewayError(
            "The gateway accepted the send but named neither a message nor a batch."
        )
        return Attempt(attempts=attempts, error=error)
    messages = (data.message,) if data.message is not None else ()
    return Attempt(messages, batch_code=data.batch_code, attempts=attempts)


def _ambiguous(
    entry: OutboxEntry, cause: GatewayError, last: GatewayError | None
) -> AmbiguousSendError:
    why = f" ({last.message})" if last is not None else ""
    return AmbiguousSendError(
        f"The gateway may or may not have lodged the message ({cause.message}), and the status "
        f"query that would tell could not be made{why}. Check the status of ExternalSystemId "
        f"{entry.external_system_id} before sending again.",
        external_system_id=entry.external_system_id,
        recipients=entry.recipients,
    )
