"""An SMS (REST or Lodge) or a WAP push, as composed and as checked: the only checks.

Every way a text message leaves (the Send tab, a batch, a conversation's reply box,
`gwdesk send`) turns what was typed into a checked `SmsMessage` here, once, before
anything is recorded: a typo is refused with no request made, and the refusal names
the wire field (`Recipient`, `Message`, `Source`, ... or Lodge's `PhoneNumber`,
`PhoneMessage`), as the gateway's own errors do, so a form can point at its input.

A checked message is also what the outbox keeps of a request (`to_json` /
`from_json`, the JSON of the entry's body) and what the REST request carries
(`rest_body`). Qt-free and I/O-free.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Final
from urllib.parse import urlsplit

from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.segments import MAX_PARTS, count_segments
from gwdesk.gateway.errors import ValidationError
from gwdesk.gateway.rest import iso


class Channel(StrEnum):
    REST_SMS = "rest_sms"
    LODGE_SMS = "lodge_sms"
    WAP_PUSH = "wap_push"

    @property
    def label(self) -> str:
        return CHANNEL_LABELS[self]

    @property
    def outbox(self) -> str:
        """The outbox's name for the channel (`sms` is REST: the only one with
        ExternalSystemIds, so the only one settled by status and resent)."""
        return OUTBOX_CHANNELS[self]


CHANNEL_LABELS: Final = {
    Channel.REST_SMS: "SMS (REST)",
    Channel.LODGE_SMS: "SMS (Lodge)",
    Channel.WAP_PUSH: "WAP push (Lodge)",
}
OUTBOX_CHANNELS: Final = {
    Channel.REST_SMS: "sms",
    Channel.LODGE_SMS: "lodge_sms",
    Channel.WAP_PUSH: "wap",
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
class SmsForm:
    """Everything a compose form holds, as typed (`recipient` is empty for a list)."""

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
class SmsMessage:
    """A checked message and its options, without recipients: what a request carries."""

    channel: Channel
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
        """What history and the outbox's label keep as the message: a WAP push's URL."""
        if self.channel is Channel.WAP_PUSH:
            return f"{self.wap_app}: {self.wap_url}" if self.wap_app else self.wap_url
        return self.text

    def rest_body(self, recipients: Sequence[str], external_id: str) -> dict[str, Any]:
        """The `/v2/message/send` request for these recipients."""
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

    def to_json(self) -> dict[str, Any]:
        """What the outbox keeps (recipients aside); `from_json` reads it back."""
        body: dict[str, Any] = {
            "text": self.text,
            "source": self.source,
            "send_at": self.send_at.isoformat() if self.send_at is not None else None,
            "reply_type": self.reply_type,
            "reply_path": self.reply_path,
            "external_id": self.external_id,
            "tags": self.tags,
        }
        if self.channel is not Channel.REST_SMS:
            body["channel"] = self.channel.value
            body["label"] = self.shown_text
        if self.channel is Channel.WAP_PUSH:
            body.update(application=self.wap_app, url=self.wap_url)
        return body

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> SmsMessage:
        """The message an entry was recorded with; ValueError when the record is not one
        (edited or damaged: it is then never sent)."""
        channel = Channel(str(body.get("channel") or Channel.REST_SMS.value))
        text = body.get("text")
        if channel is not Channel.WAP_PUSH and (not isinstance(text, str) or not text):
            raise ValueError("it holds no message text")
        optional: dict[str, str | None] = {}
        for key in ("source", "reply_type", "reply_path", "external_id", "tags"):
            value = body.get(key)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"its {key} is not text")
            optional[key] = value
        return cls(
            channel=channel,
            text=text if isinstance(text, str) else "",
            source=optional["source"],
            send_at=_moment(body.get("send_at")),
            reply_type=optional["reply_type"],
            reply_path=optional["reply_path"],
            external_id=optional["external_id"],
            tags=optional["tags"],
            wap_app=str(body.get("application") or ""),
            wap_url=str(body.get("url") or ""),
        )


def _moment(value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("its send_at is not a time")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError("its send_at has no time zone")
    return moment


def refuse(message: str, wire_field: str) -> ValidationError:
    """A refusal before any request: the operator fixes `wire_field`."""
    return ValidationError(message, field=wire_field, status=None)


# ---- checks ------------------------------------------------------------------------------


def check_recipient(text: str, region: str, wire_field: str, what: str = "recipient's") -> str:
    if not text.strip():
        raise refuse(f"Type the {what} number.", wire_field)
    try:
        return normalise(text, region)
    except NumberError as exc:
        raise refuse(f"Not a usable number: {exc.reason}.", wire_field) from None


def check_text(text: str, wire_field: str) -> str:
    if not text.strip():
        raise refuse("The message is empty: type the text to send.", wire_field)
    if "\x00" in text:
        raise refuse(
            "The message holds a NUL character (U+0000), which the gateway refuses; "
            "it usually comes from a bad paste.",
            wire_field,
        )
    info = count_segments(text)
    if info.too_long:
        raise refuse(
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
            raise refuse(f"The sender number is not usable: {exc.reason}.", wire_field) from None
    if SENDER_NAME.fullmatch(value) and any(c.isalpha() for c in value):
        return value
    raise refuse(
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
            raise refuse("Type the sender name the recipient should see.", "ReplyPath")
        return (kind, check_sender(path, region, "ReplyPath"))
    if not kind:
        raise refuse("Choose how replies are handed on (the reply type).", "ReplyType")
    if not path:
        raise refuse(f"Reply type {kind} needs a reply path: where replies go.", "ReplyPath")
    if len(path) > MAX_REPLY_PATH:
        raise refuse(f"The reply path is longer than {MAX_REPLY_PATH} characters.", "ReplyPath")
    if kind in WEBHOOK_TYPES and not is_http_url(path):
        raise refuse(
            f"Reply type {kind} needs an http(s) URL, e.g. https://example.com/sms?from=#FROM#.",
            "ReplyPath",
        )
    if kind == "EMAIL" and not EMAIL.fullmatch(path):
        raise refuse("Reply type EMAIL needs an email address.", "ReplyPath")
    return (kind, path)


def check_send_at(moment: datetime, now: datetime) -> datetime:
    if moment < now - SEND_AT_SLACK:
        raise refuse(
            "The scheduled time has passed: pick a later one, or untick Schedule to send now.",
            "SendAt",
        )
    iso(moment, "SendAt")  # a time the wire cannot carry is refused here, not by a request
    return moment


def clean_tags(text: str) -> str | None:
    tags = [t.strip() for t in text.split(",")]
    joined = ",".join(t for t in tags if t)
    return joined or None


def check_external_id(text: str) -> str | None:
    value = text.strip()
    if text and not value:
        raise refuse("The ExternalSystemId is empty.", "ExternalSystemId")
    return value or None


# ---- whole messages ----------------------------------------------------------------------


def check_message(form: SmsForm, region: str, now: datetime | None = None) -> SmsMessage:
    """The checked message and options of `form` (its recipient is not looked at: a
    batch adds its own list), or the `ValidationError` of the first field to fix."""
    now = now or datetime.now(UTC)
    if form.channel is Channel.REST_SMS:
        text = check_text(form.text, "Message")
        reply = check_reply(form.reply, region) if form.reply else None
        source = None
        if form.sender.strip() and not (reply and reply[0] == "HEADER"):
            source = check_sender(form.sender, region, "Source")
        return SmsMessage(
            Channel.REST_SMS,
            text,
            source=source,
            send_at=check_send_at(form.send_at, now) if form.send_at else None,
            reply_type=reply[0] if reply else None,
            reply_path=reply[1] if reply else None,
            external_id=check_external_id(form.external_id),
            tags=clean_tags(form.tags),
        )
    if form.channel is Channel.LODGE_SMS:
        text = check_text(form.text, "PhoneMessage")
        reply = check_reply(form.reply, region) if form.reply else None
        if reply and reply[0] not in (*LODGE_REPLY_TYPES, "HEADER"):
            raise refuse(
                f"Lodge's two-way SMS does not take reply type {reply[0]}: use "
                f"{', '.join(LODGE_REPLY_TYPES)}, or the REST channel.",
                "ReplyType",
            )
        return SmsMessage(
            Channel.LODGE_SMS,
            text,
            reply_type=reply[0] if reply else None,
            reply_path=reply[1] if reply else None,
        )
    url = form.wap_url.strip()
    if not url:
        raise refuse("Type the URL the phone should open.", "URL")
    if len(url) > MAX_URL or not is_http_url(url):
        raise refuse("The URL must be an http(s) address, e.g. https://example.com/app.", "URL")
    app = form.wap_app.strip()
    if len(app) > MAX_APP_NAME:
        raise refuse(
            f"The application name is longer than {MAX_APP_NAME} characters.", "ApplicationName"
        )
    return SmsMessage(Channel.WAP_PUSH, wap_app=app, wap_url=url)


def recipient_field(channel: Channel) -> str:
    return "Recipient" if channel is Channel.REST_SMS else "PhoneNumber"


def check_sms(form: SmsForm, region: str, now: datetime | None = None) -> tuple[SmsMessage, str]:
    """A single send's checked recipient and message, the recipient first (as the form
    reads, top down)."""
    recipient = check_recipient(form.recipient, region, recipient_field(form.channel))
    return (check_message(form, region, now), recipient)
