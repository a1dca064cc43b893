"""Turning a webhook call into an `IncomingReply`, or a 4xx that says what is wrong.

Three shapes arrive: a GET whose query carries the template's parameters
(`HTTP`, `HTTPGET`), a form POST carrying them in the body (`HTTPPOST`), and the
keyword forward's JSON object (contract field names). Everything here is pure, so
each refusal is tested without a server; the listener only maps `Rejected` to a
response.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote, unquote
from zoneinfo import ZoneInfo

from gwdesk.domain.webhook_time import WebhookTimeError, parse_webhook_time
from gwdesk.replies.template import PLACEHOLDERS, REQUIRED, ReplyTemplate
from gwdesk.store.replies import IncomingReply

MAX_PARAMS: Final = 50
"""A real call carries five; a few hundred is an attack on the parser, not a reply."""
MAX_NUMBER: Final = 32
"""Characters of a phone number or sender name: E.164 numbers have at most 15 digits and
alphanumeric senders 11 characters, so twice that leaves room for `+`, spaces and prefixes."""
MAX_ID: Final = 200
KEYWORD_FIELDS: Final = ("From", "To", "Message", "ReceivedAt")
"""Required fields of the keyword-forward JSON (contract); SentAt and the ids are optional."""


_FAR_FUTURE: Final = datetime(9000, 1, 1, tzinfo=UTC)
CLOCK_CACHE: Final = 4096
_TIMES: Final = frozenset({"SENTDTS", "RCVDDTS"})


class WebhookClock:
    """Reads `dd-MMM-yyyy HH:mm:ss` in one zone, remembering what it read.

    A flood repeats the same few second stamps thousands of times; a stamp that
    names one instant only is parsed once. One in the hour repeated when daylight
    saving ends is resolved against `near` every time.
    """

    def __init__(self, zone: ZoneInfo) -> None:
        self.zone = zone
        self._known: dict[str, datetime] = {}

    def read(self, text: str, near: datetime | None = None) -> datetime:
        """The instant `text` names; `near` (default: now) picks one of a repeated hour."""
        return self.read_encoded(quote(text, safe=""), near)

    def read_encoded(self, raw: str, near: datetime | None = None) -> datetime:
        """`read` of a still URL-encoded stamp: a repeated stamp is not even decoded again."""
        known = self._known.get(raw)
        if known is not None:
            return known
        text = _decode(raw)
        earliest = parse_webhook_time(text, self.zone)
        if parse_webhook_time(text, self.zone, near=_FAR_FUTURE) != earliest:
            return parse_webhook_time(text, self.zone, near=near or datetime.now(UTC))
        if len(self._known) >= CLOCK_CACHE:
            self._known.clear()
        self._known[raw] = earliest
        return earliest


class Rejected(Exception):
    """A call the listener refuses: `status` (4xx/5xx) and a reason for the response body."""

    def __init__(self, status: int, reason: str, *, close: bool = False) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.close = close
        """Close the connection after answering (the body was not read to its end)."""


def _number(value: str, what: str, placeholder: str | None = None) -> str:
    """A phone number or sender name; `what` (with its placeholder) names it in a refusal."""
    text = value.strip()
    problem = None
    if not text:
        problem = "is empty"
    elif len(text) > MAX_NUMBER:
        problem = f"is {len(text)} characters long; at most {MAX_NUMBER}"
    elif not text.isprintable():
        problem = "holds control characters"
    if problem is not None:
        field = what if placeholder is None else f"parameter {what!r} (#{placeholder}#)"
        raise Rejected(400, f"{field} {problem}")
    return text


def _decode(text: str) -> str:
    try:
        return unquote(text.replace("+", " "), encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise Rejected(400, "the parameters are not UTF-8 text") from None


class ParamReader:
    """Reads the parameters of one template's calls; built once per listener (the hot path).

    Only the template's own parameters are decoded; a gateway's extra ones are
    counted but otherwise left alone.
    """

    def __init__(self, template: ReplyTemplate, clock: WebhookClock) -> None:
        self.template = template
        self.clock = clock
        self._placeholders = dict(template.fields)
        self._names = template.names
        self._required = [p for p in PLACEHOLDERS if p in REQUIRED]

    def read(self, raw: str, now: datetime | None = None) -> IncomingReply:
        """A reply from a query string or form body (still percent-encoded).

        `now` (aware; default: the current time) resolves a `#RCVDDTS#` in the hour
        repeated when daylight saving ends.
        """
        count = raw.count("&") + 1 if raw else 0
        if count > MAX_PARAMS:
            raise Rejected(400, f"{count} parameters; at most {MAX_PARAMS} are accepted")
        found: dict[str, str] = {}
        for piece in raw.split("&"):
            name, _, value = piece.partition("=")
            if "%" in name or "+" in name:
                name = _decode(name)
            placeholder = self._placeholders.get(name)
            if placeholder is None:
                continue  # a gateway may add its own parameters
            if placeholder in found:
                raise Rejected(400, f"parameter {name!r} is given more than once")
            if placeholder in _TIMES:
                found[placeholder] = value  # decoded by the clock, which remembers stamps raw
            else:
                found[placeholder] = _decode(value) if "%" in value or "+" in value else value
        for placeholder in self._required:
            if placeholder not in found:
                name = self._names[placeholder]
                raise Rejected(400, f"missing parameter {name!r} (#{placeholder}#)")
        for placeholder, value in found.items():
            if (
                placeholder != "MSG"
                and ("#" in value or "%23" in value)
                and _decode(value).strip() == f"#{placeholder}#"
            ):
                raise Rejected(
                    400,
                    f"parameter {self._names[placeholder]!r} holds #{placeholder}# unfilled: the "
                    "gateway did not substitute it (use ReplyType HTTP, HTTPGET or HTTPPOST)",
                )
        received = self._when(found, "RCVDDTS", now)
        return IncomingReply(
            from_number=_number(found["FROM"], self._names["FROM"], "FROM"),
            to_number=_number(found["TO"], self._names["TO"], "TO"),
            text=found["MSG"],
            received_at=received,
            sent_at=self._when(found, "SENTDTS", received) if "SENTDTS" in found else None,
            source="webhook",
        )

    def _when(self, found: dict[str, str], placeholder: str, near: datetime | None) -> datetime:
        try:
            return self.clock.read_encoded(found[placeholder], near)
        except WebhookTimeError as exc:
            name = self._names[placeholder]
            raise Rejected(400, f"parameter {name!r} (#{placeholder}#): {exc}") from None


def reply_from_params(
    raw: str, template: ReplyTemplate, clock: WebhookClock, *, now: datetime | None = None
) -> IncomingReply:
    """`ParamReader(template, clock).read(raw, now)`, for a one-off call."""
    return ParamReader(template, clock).read(raw, now)


def decode_form(body: bytes) -> str:
    """A form body as text; percent-encoding keeps it ASCII, but raw UTF-8 is tolerated."""
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise Rejected(400, "the body is not UTF-8 text") from None


# ---- keyword forwards ----------------------------------------------------------------------


class _JsonNumber(str):
    """A JSON integer kept as its digits: `int()` of a 5,000-digit one raises (Python's
    conversion limit), and numbers here are phone numbers or ids, never arithmetic."""

    __slots__ = ()


def _is_text(value: object) -> bool:
    return isinstance(value, str) and not isinstance(value, _JsonNumber)


def _iso(data: dict[str, Any], name: str, zone: ZoneInfo) -> datetime:
    """An aware time; one that is not ISO 8601, or not expressible in UTC, is refused.

    A time that is merely implausible (year 9999, say) is the store's to judge: it
    keeps the reply, received now, with the time it claimed (`ReplyStore.add`).
    """
    value = data[name]
    if not _is_text(value):
        raise Rejected(400, f"{name} must be an ISO 8601 time string")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise Rejected(400, f"{name} is not an ISO 8601 time: {value[:40]!r}") from None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise Rejected(400, f"{name} is out of range: {value[:40]!r} is no time in UTC") from None
    return moment


def _string(data: dict[str, Any], name: str, limit: int | None = None) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str):  # a JSON number is a _JsonNumber
        raise Rejected(400, f"{name} must be a string")
    text = str(value)
    if limit is not None and len(text) > limit:
        raise Rejected(400, f"{name} is {len(text)} characters long; at most {limit}")
    return text


def reply_from_keyword(body: bytes, zone: ZoneInfo) -> IncomingReply:
    """A reply from the keyword forward's JSON body (times without an offset are in `zone`)."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Rejected(400, "the body is not UTF-8 text") from None
    try:
        data = json.loads(text, parse_int=_JsonNumber)
    except json.JSONDecodeError as exc:
        raise Rejected(
            400, f"the body is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except RecursionError:
        raise Rejected(400, "the body is not JSON anyone would send (nested too deeply)") from None
    if not isinstance(data, dict):
        raise Rejected(400, "the body must be a JSON object")
    if len(data) > MAX_PARAMS:
        raise Rejected(400, f"{len(data)} fields; at most {MAX_PARAMS} are accepted")
    missing = [name for name in KEYWORD_FIELDS if data.get(name) is None]
    if missing:
        raise Rejected(
            400, "missing field" + ("s " if len(missing) > 1 else " ") + ", ".join(missing)
        )
    message = data["Message"]
    if not _is_text(message):
        raise Rejected(400, "Message must be a string")
    from_number = _string(data, "From")
    to_number = _string(data, "To")
    assert from_number is not None
    assert to_number is not None
    return IncomingReply(
        from_number=_number(from_number, "From"),
        to_number=_number(to_number, "To"),
        text=message,
        received_at=_iso(data, "ReceivedAt", zone),
        sent_at=_iso(data, "SentAt", zone) if data.get("SentAt") is not None else None,
        message_id=_string(data, "OriginalMessageId", MAX_ID),
        reply_id=_string(data, "ReplyId", MAX_ID),
        keyword=_string(data, "Keyword", MAX_ID),
        source="keyword",
    )
