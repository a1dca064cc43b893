"""Sending exactly once: chunking, ExternalSystemIds, and settling lost answers.

Every request of a send carries an ExternalSystemId. When a send's answer is lost
(a read time-out, a dropped connection, a 5xx other than 503, an unreadable body)
the gateway may or may not have lodged it, so the client asks
`status?external_system_id=` for a short, bounded window (a batch's messages appear
in the background): messages found mean it was lodged, and they are the result;
still nothing at the end of the window means it surely was not, and it is sent
again with the same ExternalSystemId. It is never resent blindly.

Generated ExternalSystemIds look like `gwd-20250101T093000Z-3f9c2a7b1d04-0001`: a
prefix, the UTC time of the send, 48 random bits shared by the whole send, and the
1-based number of the request (chunk of at most 100 recipients) within it. An
operator's own ExternalSystemId is used as given on every chunk; because an
operator may reuse one, the messages it already named before the send are noted
first and never taken as this send's.

A send is prepared (`Sender.prepare`: the checks, the ExternalSystemIds, that
baseline) before any request leaves, so a caller can record the plan first (the
durable outbox, `gwdesk.gateway.outbox_sender`) and then send its chunks one by one
(`Sender.run_chunk`). Checking a long list of numbers is CPU work of a few seconds
per 100,000, so it runs on a worker thread rather than the event loop (in the
console, the GUI thread).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from gwdesk.domain.models import Message, SendEnvelope
from gwdesk.domain.numbers import RecipientCheck, Rejected, check_recipients
from gwdesk.domain.segments import MAX_PARTS, count_segments
from gwdesk.gateway.errors import (
    AmbiguousSendError,
    AuthenticationError,
    GatewayError,
    InvalidRecipientsError,
    TransientError,
    ValidationError,
)
from gwdesk.gateway.rest import RestClient, iso
from gwdesk.gateway.retry import Retrier, retryable_idempotent, retryable_send

log = logging.getLogger("gwdesk.gateway.sending")
MAX_RECIPIENTS_PER_REQUEST: Final = 100
ID_PREFIX: Final = "gwd-"
#: Longer recipient lists are checked on a worker thread (about 50 µs a number).
CHECK_INLINE_LIMIT: Final = 200


def new_send_id(now: datetime | None = None) -> str:
    """The shared part of a send's generated ExternalSystemIds."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return f"{ID_PREFIX}{moment:%Y%m%dT%H%M%SZ}-{secrets.token_hex(6)}"


def chunk_id(send_id: str, index: int) -> str:
    return f"{send_id}-{index:04d}"


def chunked(
    numbers: Sequence[str], size: int = MAX_RECIPIENTS_PER_REQUEST
) -> list[tuple[str, ...]]:
    return [tuple(numbers[i : i + size]) for i in range(0, len(numbers), size)]


@dataclass(frozen=True, slots=True)
class Outgoing:
    """What the operator asked to send, before the numbers are checked."""

    text: str
    recipients: Sequence[str]
    source: str | None = None
    send_at: datetime | None = None
    reply_type: str | None = None
    reply_path: str | None = None
    external_id: str | None = None
    tags: str | None = None

    def check(self) -> None:
        """Refuse, before any request, what the gateway would refuse for sure."""
        if not self.text or not self.text.strip():
            raise ValidationError("The message is empty.", field="Message", status=None)
        info = count_segments(self.text)
        if info.too_long:
            raise ValidationError(
                f"The message needs {info.parts} SMS parts ({info.encoding}); "
                f"the gateway allows at most {MAX_PARTS}.",
                field="Message",
                status=None,
            )
        if self.reply_path and not self.reply_type:
            raise ValidationError(
                "A reply path needs a reply type.", field="ReplyType", status=None
            )
        if self.reply_type and not self.reply_path:
            raise ValidationError(
                f"Reply type {self.reply_type} needs a reply path.", field="ReplyPath", status=None
            )
        if self.external_id is not None and not self.external_id.strip():
            raise ValidationError(
                "The ExternalSystemId is empty.", field="ExternalSystemId", status=None
            )
        if self.send_at is not None:
            iso(self.send_at, "SendAt")

    def body(self, recipients: Sequence[str], external_id: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "Message": self.text,
            "Recipients": list(recipients),
            "ExternalSystemId": external_id,
        }
        if self.source:
            body["Source"] = self.source
        if self.send_at is not None:
            body["SendAt"] = iso(self.send_at, "SendAt")
        if self.tags:
            body["Tags"] = self.tags
        if self.reply_type:
            body["ReplyType"] = self.reply_type
            body["ReplyPath"] = self.reply_path
        return body


@dataclass(frozen=True, slots=True)
class ChunkResult:
    """What became of one request of a send (at most 100 recipients)."""

    index: int
    external_system_id: str
    recipients: tuple[str, ...]
    message: Message | None = None
    """The message, when the request had one recipient and the answer arrived."""
    batch_code: str | None = None
    found: tuple[Message, ...] = ()
    """Messages a status query found after the answer was lost (so the batch code is not known)."""
    resolved: bool = False
    """The outcome was learnt from a status query, not from the send's own answer."""
    attempts: int = 0
    error: GatewayError | None = None

    @property
    def lodged(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class SendOutcome:
    """A whole send: each request's result, and the entries that were not sent."""

    chunks: tuple[ChunkResult, ...]
    rejected: tuple[Rejected, ...] = ()
    duplicates: int = 0

    @property
    def ok(self) -> bool:
        return all(chunk.lodged for chunk in self.chunks)

    @property
    def lodged_recipients(self) -> int:
        return sum(len(c.recipients) for c in self.chunks if c.lodged)

    @property
    def failed(self) -> tuple[ChunkResult, ...]:
        return tuple(c for c in self.chunks if not c.lodged)


@dataclass
class SendPlan:
    """A checked send, before any request: its numbers, chunks and ExternalSystemIds."""

    outgoing: Outgoing
    check: RecipientCheck
    send_id: str
    baseline: frozenset[str] = field(default_factory=frozenset)
    """MessageIds the operator's ExternalSystemId already named before this send."""

    def external_id(self, index: int) -> str:
        given = self.outgoing.external_id
        return given.strip() if given else chunk_id(self.send_id, index)

    @property
    def own_id(self) -> bool:
        """The ExternalSystemIds are generated (unique to each request), not the operator's."""
        return not self.outgoing.external_id

    def parts(self) -> list[tuple[int, tuple[str, ...]]]:
        """(1-based request number, recipients) of each request of at most 100."""
        return list(enumerate(chunked(self.check.numbers), start=1))


async def check_numbers(recipients: Sequence[str], region: str) -> RecipientCheck:
    """`check_recipients`, on a worker thread for a long list (the loop stays free)."""
    entries = list(recipients)
    if len(entries) <= CHECK_INLINE_LIMIT:
        return check_recipients(entries, region)
    return await asyncio.to_thread(check_recipients, entries, region)


class Sender:
    """Sends through a `RestClient` so that each message is lodged once."""

    def __init__(
        self,
        rest: RestClient,
        retrier: Retrier,
        region: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rest = rest
        self.retrier = retrier
        self.region = region
        self.clock = clock

    async def prepare(
        self,
        outgoing: Outgoing,
        *,
        skip_invalid: bool = False,
        checked: RecipientCheck | None = None,
    ) -> SendPlan:
        """Check everything and fix the ExternalSystemIds; no send request is made.

        Unusable numbers stop the send unless `skip_invalid`, when they are left out
        and listed in the plan. `checked` is a check already made (`gwdesk send --csv`
        imports through `gwdesk.importing`): its numbers are sent, not checked again.
        An operator's own ExternalSystemId costs one status query here (the messages
        it already names are never taken as this send's).
        """
        outgoing.check()
        if checked is None:
            checked = await check_numbers(outgoing.recipients, self.region)
        if checked.rejected and not skip_invalid:
            raise InvalidRecipientsError([(r.index, r.text, r.reason) for r in checked.rejected])
        if not checked.numbers:
            raise ValidationError("There is no usable recipient.", field="Recipients", status=None)
        plan = SendPlan(outgoing, checked, new_send_id())
        if outgoing.external_id:
            found = await self.rest.status(external_system_id=outgoing.external_id.strip())
            plan.baseline = frozenset(m.message_id for m in found)
        return plan

    async def send(
        self,
        outgoing: Outgoing,
        *,
        skip_invalid: bool = False,
        concurrency: int = 4,
        on_chunk: Callable[[ChunkResult], None] | None = None,
    ) -> SendOutcome:
        """Send to every recipient, in requests of at most 100.

        Unusable numbers stop the send before any request unless `skip_invalid`, when
        they are left out and listed in the outcome. A request that fails does not
        stop the others, except an authentication failure, which would fail them all.
        """
        plan = await self.prepare(outgoing, skip_invalid=skip_invalid)
        gate = asyncio.Semaphore(max(1, concurrency))
        stop: list[GatewayError] = []

        async def run(index: int, recipients: tuple[str, ...]) -> ChunkResult:
            external_id = plan.external_id(index)
            async with gate:
                if stop:
                    result = ChunkResult(
                        index, external_id, recipients, error=not_attempted(stop[0])
                    )
                else:
                    result = await self.run_chunk(plan, index, recipients)
                    if isinstance(result.error, AuthenticationError):
                        stop.append(result.error)
            if on_chunk is not None:
                on_chunk(result)
            return result

        results = await asyncio.gather(*(run(i, recipients) for i, recipients in plan.parts()))
        return SendOutcome(tuple(results), plan.check.rejected, plan.check.duplicates)

    async def run_chunk(
        self,
        plan: SendPlan,
        index: int,
        recipients: tuple[str, ...],
        *,
        external_id: str | None = None,
    ) -> ChunkResult:
        """`send_chunk`, with a failure in the result instead of raised."""
        external_id = external_id or plan.external_id(index)
        try:
            return await self.send_chunk(plan, index, recipients, external_id=external_id)
        except GatewayError as exc:
            log.warning("request %d (%s) failed: %s", index, external_id, exc.message)
            return ChunkResult(index, external_id, recipients, error=exc)

    async def send_chunk(
        self,
        plan: SendPlan,
        index: int,
        recipients: tuple[str, ...],
        *,
        external_id: str | None = None,
    ) -> ChunkResult:
        """One request, repeated only when it surely was not lodged."""
        external_id = external_id or plan.external_id(index)
        body = plan.outgoing.body(recipients, external_id)
        policy = self.retrier.policy
        attempt = 0
        while True:
            attempt += 1
            try:
                envelope = await self.rest.send_once(body)
            except GatewayError as exc:
                if exc.maybe_processed:
                    log.info(
                        "request %s: answer lost (%s); asking status", external_id, exc.message
                    )
                    found = await self.resolve(plan, external_id, recipients, exc)
                    if found:
                        return ChunkResult(
                            index,
                            external_id,
                            recipients,
                            found=found,
                            resolved=True,
                            attempts=attempt,
                        )
                    # Surely not lodged: sending it again cannot make a second copy.
                    if attempt >= policy.send_attempts:
                        raise TransientError(
                            f"The gateway did not lodge the message after {attempt} tries "
                            f"(last: {exc.message}).",
                            status=exc.status,
                        ) from None
                    continue
                if not retryable_send(exc) or attempt >= policy.send_attempts:
                    raise
                wait = self.retrier.delay_for(exc, attempt)
                if wait is None:
                    raise
                await self.retrier.sleep(wait)
                continue
            return _from_envelope(index, external_id, recipients, envelope, attempt)

    async def resolve(
        self,
        plan: SendPlan,
        external_id: str,
        recipients: tuple[str, ...],
        cause: GatewayError,
    ) -> tuple[Message, ...]:
        """Messages this request lodged, or () once the window shows it lodged nothing.

        Raises `AmbiguousSendError` when the gateway could not be asked in the window.
        """
        policy = self.retrier.policy
        deadline = self.clock() + policy.resolve_window
        delay = policy.resolve_first_delay
        wanted = recipient_digits(recipients)
        own_id = plan.own_id
        failures = 0
        while True:
            answered = False
            try:
                messages = await self.rest.status_once(external_system_id=external_id)
                answered = True
            except GatewayError as exc:
                if not retryable_idempotent(exc):
                    raise _ambiguous(external_id, recipients, cause, exc) from None
                failures += 1
                messages = []
            mine = ours(messages, plan.baseline, None if own_id else wanted)
            if mine:
                return mine
            now = self.clock()
            if now >= deadline:
                if answered:
                    log.info("request %s: not lodged; sending it again", external_id)
                    return ()
                if failures >= policy.attempts * 2:
                    raise _ambiguous(external_id, recipients, cause, None)
            await self.retrier.sleep(min(delay, max(0.0, deadline - now)) or delay)
            delay = min(delay * 2, policy.resolve_max_delay)

    async def simple_send(
        self,
        text: str,
        recipient: str,
        *,
        source: str | None = None,
        send_at: datetime | None = None,
    ) -> Message:
        """`simple_send` carries no ExternalSystemId, so a lost answer cannot be settled.

        It is repeated only when surely not lodged; otherwise `AmbiguousSendError`.
        `send` with one recipient is the exactly-once way to send one message.
        """
        Outgoing(text, [recipient], send_at=send_at).check()
        checked = check_recipients([recipient], self.region)
        if checked.rejected:
            raise InvalidRecipientsError([(r.index, r.text, r.reason) for r in checked.rejected])
        body: dict[str, Any] = {"Message": text, "Recipient": checked.numbers[0]}
        if source:
            body["From"] = source
        if send_at is not None:
            body["SendAt"] = iso(send_at, "SendAt")
        attempt = 0
        while True:
            attempt += 1
            try:
                envelope = await self.rest.simple_send_once(body)
            except GatewayError as exc:
                if exc.maybe_processed:
                    raise AmbiguousSendError(
                        f"The gateway may or may not have lodged the message to "
                        f"{checked.numbers[0]} ({exc.message}). Check its log before sending again.",
                        external_system_id=None,
                        recipients=checked.numbers,
                    ) from None
                if not retryable_send(exc) or attempt >= self.retrier.policy.send_attempts:
                    raise
                wait = self.retrier.delay_for(exc, attempt)
                if wait is None:
                    raise
                await self.retrier.sleep(wait)
                continue
            if envelope.data.message is None:
                raise GatewayError("The gateway's answer to the send named no message.")
            return envelope.data.message


def _digits(number: str) -> str:
    return "".join(c for c in number if c.isdigit())


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


def recipient_digits(recipients: Sequence[str]) -> set[str]:
    return {_digits(r) for r in recipients}


def _from_envelope(
    index: int, external_id: str, recipients: tuple[str, ...], envelope: SendEnvelope, attempts: int
) -> ChunkResult:
    data = envelope.data
    if data.message is None and data.batch_code is None:
        raise GatewayError("The gateway accepted the send but named neither a message nor a batch.")
    return ChunkResult(
        index,
        external_id,
        recipients,
        message=data.message,
        batch_code=data.batch_code,
        attempts=attempts,
    )


def _ambiguous(
    external_id: str, recipients: tuple[str, ...], cause: GatewayError, last: GatewayError | None
) -> AmbiguousSendError:
    why = f" ({last.message})" if last is not None else ""
    return AmbiguousSendError(
        f"The gateway may or may not have lodged the message ({cause.message}), and the status "
        f"query that would tell could not be made{why}. Check the status of ExternalSystemId "
        f"{external_id} before sending again.",
        external_system_id=external_id,
        recipients=recipients,
    )


def not_attempted(cause: GatewayError) -> GatewayError:
    return type(cause)(f"Not sent, because an earlier request failed: {cause.message}")
