"""What the Send tab sends, kept free of Qt: channels, checks before sending, delivery.

The form's raw values become a `Prepared` request only when every value the chosen
channel uses passes the checks the gateway would apply (so a typo is refused with
no request made, and the refusal names the wire field, like the gateway's own
errors do). Delivery then goes through the profile's durable outbox when one is
given (recorded before the request leaves, settled after a crash): REST as a send
with one recipient (the exactly-once path: every request carries an ExternalSystemId
that settles a lost answer), Lodge through `GatewayService.legacy`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Final
from urllib.parse import urlsplit

from gwdesk.domain.models import LodgeResult, LodgeText
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.segments import MAX_PARTS, count_segments
from gwdesk.gateway.errors import GatewayError, ValidationError
from gwdesk.gateway.outbox_records import lodge_verdict
from gwdesk.gateway.outbox_sender import OutboxSender
from gwdesk.gateway.sending import Outgoing, SendOutcome
from gwdesk.gateway.service import GatewayService


class Channel(StrEnum):
    REST_SMS = "rest_sms"
    LODGE_SMS = "lodge_sms"
    WAP_PUSH = "wap_push"

    @property
    def label(self) -> str:
        return CHANNEL_LABELS[self]


CHANNEL_LABELS: Final = {
    Channel.REST_SMS: "SMS (REST)",
    Channel.LODGE_SMS: "SMS (Lodge)",
    Channel.WAP_PUSH: "WAP push (Lodge)",
}
CHANNEL_TIPS: Final = {
    Channel.REST_SMS: "The current /v2/ interface: sender, scheduling, reply routes, "
    "ExternalSystemId and tags; sent exactly once even when an answer is lost.",
    Channel.LODGE_SMS: "The legacy Lodge service: LodgeSMSMessage, or "
    "LodgeSMSMessageWithReplyXML for two-way and HEADER messages.",
    Channel.WAP_PUSH: "Lodge's LodgeWAPPush: a link the phone offers to open.",
}
#: Reply types the Lodge two-way operation takes (spec); HEADER is the sender choice.
LODGE_REPLY_TYPES: Final = ("EMAIL", "WWW", "HTTP", "TCP/IP")
WEBHOOK_TYPES: Final = ("HTTP", "HTTPGET", "HTTPPOST")
SENDER_NAME: Final = re.compile(r"[A-Za-z0-9 ._-]{1,11}")
SENDER_NUMBER: Final = re.compile(r"\+?[0-9 ()-]{8,20}")
EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
MAX_REPLY_PATH: Final = 2000
MAX_URL: Final = 2000
MAX_APP_NAME: Final = 100
#: A picker shows whole minutes; the current minute still counts as "now".
SEND_AT_SLACK: Final = timedelta(seconds=60)


@dataclass(frozen=True, slots=True)
class FormValues:
    """Everything the compose form holds, as typed."""

    channel: Channel = Channel.REST_SMS
    recipient: str = ""
    text: str = ""
    sender: str = ""
    send_at: datetime | None = None
    reply: tuple[str, str] | None = None
    """(ReplyType, ReplyPath); ("HEADER", sender name) for a HEADER sender."""
    external_id: str = ""
    tags: str = ""
    wap_app: str = ""
    wap_url: str = ""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A checked request for one channel."""

    channel: Channel
    recipient: str
    text: str = ""
    source: str | None = None
    send_at: datetime | None = None
    reply_type: str | None = None
    reply_path: str | None = None
    external_id: str | None = None
    tags: str | None = None
    wap_app: str = ""
    wap_url: str = ""

    @property
    def shown_text(self) -> str:
        """What the history keeps as the message: the URL of a WAP push."""
        if self.channel is Channel.WAP_PUSH:
            return f"{self.wap_app}: {self.wap_url}" if self.wap_app else self.wap_url
        return self.text


@dataclass(frozen=True, slots=True)
class Delivered:
    """What the gateway said about a send that went."""

    recipient: str
    message_id: str | None = None
    status: str | None = None
    external_system_id: str | None = None
    batch_code: str | None = None
    detail: str = ""


def _refuse(message: str, wire_field: str) -> ValidationError:
    return ValidationError(message, field=wire_field, status=None)


# ---- checks ------------------------------------------------------------------------------


def check_recipient(text: str, region: str, wire_field: str) -> str:
    if not text.strip():
        raise _refuse("Type the recipient's number.", wire_field)
    try:
        return normalise(text, region)
    except NumberError as exc:
        raise _refuse(f"Not a usable number: {exc.reason}.", wire_field) from None


def check_text(text: str, wire_field: str) -> str:
    if not text.strip():
        raise _refuse("The message is empty: type the text to send.", wire_field)
    if "\x00" in text:
        raise _refuse(
            "The message holds a NUL character (U+0000), which the gateway refuses; "
            "it usually comes from a bad paste.",
            wire_field,
        )
    info = count_segments(text)
    if info.too_long:
        raise _refuse(
            f"The message needs {info.parts} SMS parts ({info.encoding}); the gateway takes "
            f"at most {MAX_PARTS}.",
            wire_field,
        )
    return text


def check_sender(text: str, region: str, wire_field: str) -> str:
    """A number (read in the region when national) or a name of up to 11 characters."""
    value = text.strip()
    if SENDER_NUMBER.fullmatch(value) and sum(c.isdigit() for c in value) >= 8:
        try:
            return normalise(value, region)
        except NumberError as exc:
            raise _refuse(f"The sender number is not usable: {exc.reason}.", wire_field) from None
    if SENDER_NAME.fullmatch(value) and any(c.isalpha() for c in value):
        return value
    raise _refuse(
        "The sender must be a number or a name of up to 11 letters, digits, spaces, "
        "'.', '_' or '-' (with at least one letter).",
        wire_field,
    )


def is_http_url(text: str) -> bool:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return False
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def check_reply(reply: tuple[str, str], region: str) -> tuple[str, str]:
    kind, path = reply[0].strip().upper(), reply[1].strip()
    if kind == "HEADER":
        if not path:
            raise _refuse("Type the sender name the recipient should see.", "ReplyPath")
        return (kind, check_sender(path, region, "ReplyPath"))
    if not kind:
        raise _refuse("Choose how replies are handed on (the reply type).", "ReplyType")
    if not path:
        raise _refuse(f"Reply type {kind} needs a reply path: where replies go.", "ReplyPath")
    if len(path) > MAX_REPLY_PATH:
        raise _refuse(f"The reply path is longer than {MAX_REPLY_PATH} characters.", "ReplyPath")
    if kind in WEBHOOK_TYPES and not is_http_url(path):
        raise _refuse(
            f"Reply type {kind} needs an http(s) URL, e.g. https://example.com/sms?from=#FROM#.",
            "ReplyPath",
        )
    if kind == "EMAIL" and not EMAIL.fullmatch(path):
        raise _refuse("Reply type EMAIL needs an email address.", "ReplyPath")
    return (kind, path)


def check_send_at(moment: datetime, now: datetime) -> datetime:
    if moment < now - SEND_AT_SLACK:
        raise _refuse(
            "The scheduled time has passed: pick a later one, or untick Schedule to send now.",
            "SendAt",
        )
    return moment


def clean_tags(text: str) -> str | None:
    tags = [t.strip() for t in text.split(",")]
    joined = ",".join(t for t in tags if t)
    return joined or None


# ---- preparing ---------------------------------------------------------------------------


def prepare(values: FormValues, region: str, now: datetime | None = None) -> Prepared:
    """A checked request, or the `ValidationError` of the first field to fix."""
    now = now or datetime.now(UTC)
    if values.channel is Channel.REST_SMS:
        return _prepare_rest(values, region, now)
    if values.channel is Channel.LODGE_SMS:
        return _prepare_lodge(values, region)
    return _prepare_wap(values, region)


def _prepare_rest(values: FormValues, region: str, now: datetime) -> Prepared:
    recipient = check_recipient(values.recipient, region, "Recipient")
    text = check_text(values.text, "Message")
    reply = check_reply(values.reply, region) if values.reply else None
    source = None
    if values.sender.strip() and not (reply and reply[0] == "HEADER"):
        source = check_sender(values.sender, region, "Source")
    send_at = check_send_at(values.send_at, now) if values.send_at else None
    external_id = values.external_id.strip() or None
    return Prepared(
        Channel.REST_SMS,
        recipient,
        text=text,
        source=source,
        send_at=send_at,
        reply_type=reply[0] if reply else None,
        reply_path=reply[1] if reply else None,
        external_id=external_id,
        tags=clean_tags(values.tags),
    )


def _prepare_lodge(values: FormValues, region: str) -> Prepared:
    recipient = check_recipient(values.recipient, region, "PhoneNumber")
    text = check_text(values.text, "PhoneMessage")
    reply = check_reply(values.reply, region) if values.reply else None
    if reply and reply[0] not in (*LODGE_REPLY_TYPES, "HEADER"):
        raise _refuse(
            f"Lodge's two-way SMS does not take reply type {reply[0]}: use "
            f"{', '.join(LODGE_REPLY_TYPES)}, or the REST channel.",
            "ReplyType",
        )
    return Prepared(
        Channel.LODGE_SMS,
        recipient,
        text=text,
        reply_type=reply[0] if reply else None,
        reply_path=reply[1] if reply else None,
    )


def _prepare_wap(values: FormValues, region: str) -> Prepared:
    recipient = check_recipient(values.recipient, region, "PhoneNumber")
    url = values.wap_url.strip()
    if not url:
        raise _refuse("Type the URL the phone should open.", "URL")
    if len(url) > MAX_URL or not is_http_url(url):
        raise _refuse("The URL must be an http(s) address, e.g. https://example.com/app.", "URL")
    app = values.wap_app.strip()
    if len(app) > MAX_APP_NAME:
        raise _refuse(
            f"The application name is longer than {MAX_APP_NAME} characters.", "ApplicationName"
        )
    return Prepared(Channel.WAP_PUSH, recipient, wap_app=app, wap_url=url)


# ---- delivering --------------------------------------------------------------------------


async def deliver(
    service: GatewayService, request: Prepared, outbox: OutboxSender | None = None
) -> Delivered:
    """Send `request` (through `outbox` when given); a `GatewayError` says why it did not go."""
    if request.channel is Channel.REST_SMS:
        return await _deliver_rest(service, request, outbox)
    if request.channel is Channel.LODGE_SMS:

        async def lodge_sms() -> LodgeText | LodgeResult:
            return await service.legacy.send_sms(
                request.recipient,
                request.text,
                reply_type=request.reply_type,
                reply_path=request.reply_path,
            )

        description = {
            "label": request.text,
            "text": request.text,
            "reply_type": request.reply_type,
            "reply_path": request.reply_path,
        }
        if outbox is None:
            answer = await lodge_sms()
        else:
            answer = await outbox.lodge(
                "lodge_sms", [request.recipient], description, lodge_sms, lodge_verdict
            )
        return _from_lodge(request.recipient, answer)

    async def wap() -> LodgeText:
        return await service.legacy.send_wap_push(
            request.recipient, request.wap_app, request.wap_url
        )

    if outbox is None:
        text = await wap()
    else:
        text = await outbox.lodge(
            "wap",
            [request.recipient],
            {"label": request.shown_text, "application": request.wap_app, "url": request.wap_url},
            wap,
            lodge_verdict,
        )
    return _from_lodge(request.recipient, text)


async def _deliver_rest(
    service: GatewayService, request: Prepared, outbox: OutboxSender | None
) -> Delivered:
    outgoing = Outgoing(
        request.text,
        [request.recipient],
        source=request.source,
        send_at=request.send_at,
        reply_type=request.reply_type,
        reply_path=request.reply_path,
        external_id=request.external_id,
        tags=request.tags,
    )
    outcome: SendOutcome
    if outbox is None:
        outcome = await service.send(outgoing, concurrency=1)
    else:
        outcome, _batch = await outbox.send(outgoing, concurrency=1)
    if not outcome.chunks:
        raise GatewayError("The gateway was not asked: there was nothing to send.")
    chunk = outcome.chunks[0]
    if chunk.error is not None:
        raise chunk.error
    message = chunk.message or (chunk.found[0] if chunk.found else None)
    detail = (
        "The answer was lost; a status query by ExternalSystemId found the message."
        if chunk.resolved
        else ""
    )
    return Delivered(
        recipient=message.phone_number if message else request.recipient,
        message_id=message.message_id if message else None,
        status=message.status if message else None,
        external_system_id=chunk.external_system_id,
        batch_code=chunk.batch_code,
        detail=detail,
    )


def _from_lodge(recipient: str, answer: LodgeText | LodgeResult) -> Delivered:
    if isinstance(answer, LodgeResult):
        return Delivered(
            recipient,
            message_id=answer.msg_id,
            status="Lodged",
            detail=f"Lodge accepted it (Result {answer.result}).",
        )
    return Delivered(
        recipient,
        status="Lodged",
        detail=f"Lodge answered {answer.text!r} (a text operation returns no MessageId).",
    )
