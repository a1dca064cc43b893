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

from gwdesk.domain.errors import ValidationError
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.segments import MAX_PARTS, SegmentInfo, count_segments
from gwdesk.domain.sender_id import SenderKind, check_sender_id
from gwdesk.domain.settings import DEFAULT_INSTRUCTION
from gwdesk.domain.wire_time import iso


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
    """A time handed to the gateway (`SendAt`): it lodges now and sends then."""
    hold_until: datetime | None = None
    """A time gwdesk keeps instead: held in the outbox, changeable until then, sent then
    (`gwdesk.app.scheduled`)."""
    repeat: str = ""
    """With `hold_until`: sent again daily, weekdays, weekly or monthly ('' once)."""
    reply: tuple[str, str] | None = None
    """(ReplyType, ReplyPath); ("HEADER", sender name) for a HEADER sender."""
    external_id: str = ""
    tags: str = ""
    wap_app: str = ""
    wap_url: str = ""
    marketing: bool = False
    """A commercial message: it carries the opt-out instruction and needs a sender that
    can be replied to."""
    factual: bool = False
    """Purely factual (no marketing): it may go to a number that opted out."""


@dataclass(frozen=True, slots=True)
class Compliance:
    """A profile's rules for marketing messages."""

    marketing_default: bool = False
    instruction: str = DEFAULT_INSTRUCTION


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
    marketing: bool = False
    factual: bool = False

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
        if self.marketing:
            body["marketing"] = True
        if self.factual:
            body["factual"] = True
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
            marketing=body.get("marketing") is True,
            factual=body.get("factual") is True,
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


def counted_text(text: str, wire_field: str) -> SegmentInfo:
    """Check a message's text (the rules every text meets, each personal message too)
    and say what it costs."""
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
    return info


def check_text(text: str, wire_field: str) -> str:
    counted_text(text, wire_field)
    return text


def check_sender(text: str, region: str, wire_field: str) -> str:
    """A number (read in the region when national) or a name, by ACMA's Sender ID rules:
    what would mislead or break is refused; what only may show differently (a name over
    11 characters) is sent, and the compose forms warn of it as it is typed."""
    found = check_sender_id(text, region)
    if found.errors:
        raise refuse(found.errors[0], wire_field)
    return found.value


def replyable(sender: str | None, region: str) -> bool:
    """Whether replies (and so a STOP) can come back to this sender: a number, or none
    (the gateway's own number)."""
    return sender is None or check_sender_id(sender, region).kind is SenderKind.NUMBER


def with_instruction(text: str, instruction: str) -> str:
    """A marketing message's text: the operator's, then the instruction on its own line
    (once: a text that already ends with it is left as it is)."""
    wanted = " ".join(instruction.split())
    if not wanted or " ".join(text.split()).casefold().endswith(wanted.casefold()):
        return text
    return f"{text.rstrip()}\n{wanted}"


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


def check_marking(form: SmsForm) -> None:
    if form.marketing and form.factual:
        raise refuse(
            "A message is either marketing or purely factual, not both: untick one.", "Marketing"
        )


def check_marketing_sender(shown: str | None, region: str, wire_field: str) -> None:
    """A marketing message must be answerable: "Reply STOP" from a name reaches nobody."""
    if not replyable(shown, region):
        raise refuse(
            f"A marketing message must let the recipient reply STOP, and no reply can come "
            f"back to the sender name {shown!r}: send it from a number, or leave the sender "
            "empty (the account's number).",
            wire_field,
        )


def check_message(
    form: SmsForm,
    region: str,
    now: datetime | None = None,
    compliance: Compliance | None = None,
) -> SmsMessage:
    """The checked message and options of `form` (its recipient is not looked at: a
    batch adds its own list), or the `ValidationError` of the first field to fix. A
    marketing message's text gets the profile's opt-out instruction, so its parts count
    it."""
    now = now or datetime.now(UTC)
    rules = compliance or Compliance()
    check_marking(form)
    if form.channel is Channel.REST_SMS:
        check_text(form.text, "Message")  # the instruction alone is no message
        typed = with_instruction(form.text, rules.instruction) if form.marketing else form.text
        return _rest_message(form, check_text(typed, "Message"), region, now)
    if form.channel is Channel.LODGE_SMS:
        check_text(form.text, "PhoneMessage")
        typed = with_instruction(form.text, rules.instruction) if form.marketing else form.text
        text = check_text(typed, "PhoneMessage")
        reply = check_reply(form.reply, region) if form.reply else None
        if reply and reply[0] not in (*LODGE_REPLY_TYPES, "HEADER"):
            raise refuse(
                f"Lodge's two-way SMS does not take reply type {reply[0]}: use "
                f"{', '.join(LODGE_REPLY_TYPES)}, or the REST channel.",
                "ReplyType",
            )
        if form.marketing and reply is not None and reply[0] == "HEADER":
            check_marketing_sender(reply[1], region, "ReplyPath")
        return SmsMessage(
            Channel.LODGE_SMS,
            text,
            reply_type=reply[0] if reply else None,
            reply_path=reply[1] if reply else None,
            marketing=form.marketing,
            factual=form.factual,
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
    return SmsMessage(
        Channel.WAP_PUSH, wap_app=app, wap_url=url, marketing=form.marketing, factual=form.factual
    )


def _rest_message(form: SmsForm, text: str, region: str, now: datetime) -> SmsMessage:
    """A REST SMS's options checked (the marking checked already), around `text`."""
    reply = check_reply(form.reply, region) if form.reply else None
    source = None
    header = reply is not None and reply[0] == "HEADER"
    if form.sender.strip() and not header:
        source = check_sender(form.sender, region, "Source")
    if form.marketing:
        shown = reply[1] if reply is not None and header else source
        check_marketing_sender(shown, region, "ReplyPath" if header else "Source")
    return SmsMessage(
        Channel.REST_SMS,
        text,
        source=source,
        send_at=check_send_at(form.send_at, now) if form.send_at else None,
        reply_type=reply[0] if reply else None,
        reply_path=reply[1] if reply else None,
        external_id=check_external_id(form.external_id),
        tags=clean_tags(form.tags),
        marketing=form.marketing,
        factual=form.factual,
    )


def check_options(form: SmsForm, region: str, now: datetime | None = None) -> SmsMessage:
    """The checked options of a message whose text is made per recipient (a personal
    message, `gwdesk.app.personal`, checks each text with `counted_text`): what
    `check_message` checks but the text, which is left empty (a marketing message's
    instruction goes into each text as it is made). REST only: a personal send groups
    identical texts into requests of 100."""
    check_marking(form)
    if form.channel is not Channel.REST_SMS:
        raise refuse(
            "Personal messages (a template filled in per recipient) go over REST only.",
            "Message",
        )
    return _rest_message(form, "", region, now or datetime.now(UTC))


def recipient_field(channel: Channel) -> str:
    return "Recipient" if channel is Channel.REST_SMS else "PhoneNumber"


def check_sms(
    form: SmsForm,
    region: str,
    now: datetime | None = None,
    compliance: Compliance | None = None,
) -> tuple[SmsMessage, str]:
    """A single send's checked recipient and message, the recipient first (as the form
    reads, top down)."""
    recipient = check_recipient(form.recipient, region, recipient_field(form.channel))
    return (check_message(form, region, now, compliance), recipient)
