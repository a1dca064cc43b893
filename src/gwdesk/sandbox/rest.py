"""The REST `/v2/` face of the sandbox: validation, envelopes and statuses per the contract."""

from __future__ import annotations

import codecs
import json
import math
import sqlite3
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final
from urllib.parse import parse_qsl

from aiohttp import web

from gwdesk.sandbox import validation as v
from gwdesk.sandbox.auth import AuthError, TokenError
from gwdesk.sandbox.db import Account
from gwdesk.sandbox.engine import SERVICE_REST, Draft, Engine, LogQuery, datetime_to_us, iso
from gwdesk.sandbox.http_util import (
    BodyTooLarge,
    Handler,
    answered,
    any_case,
    failure,
    json_response,
    read_limited,
    success,
)
from gwdesk.sandbox.state import STATE, SandboxState

STATUS_PARAMS = ("message_id", "batch_code", "external_system_id")
LOG_PARAMS = ("page", "since", "message_id", "batch_code", "recipient")
FORM_TYPE = "application/x-www-form-urlencoded"
BODY_UNREADABLE = "The request body could not be read: its Content-Encoding or chunking is broken."


class RestError(Exception):
    """Turns into the failure envelope with this status."""

    def __init__(
        self,
        status: int,
        message: str,
        field: str | None = None,
        headers: dict[str, str] | None = None,
        *,
        close: bool = False,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.field, self.headers = status, message, field, headers
        self.close = close
        """Close the connection after answering: the rest of the body cannot be read."""


def _state(request: web.Request) -> SandboxState:
    return request.app[STATE]


def _account(request: web.Request) -> Account:
    try:
        return _state(request).auth.authenticate(request.headers.get("Authorization"))
    except AuthError as exc:
        raise RestError(401, exc.message, headers={"WWW-Authenticate": exc.challenge}) from None


async def _body(request: web.Request) -> bytes:
    try:
        return await read_limited(request, _state(request).config.rest_body_limit)
    except BodyTooLarge as exc:
        raise RestError(413, f"The request body is larger than {exc.limit} bytes.") from None
    except web.RequestPayloadError:
        # A corrupt Content-Encoding (gzip, deflate) or broken chunking.
        raise RestError(400, BODY_UNREADABLE, close=True) from None


def _charset(request: web.Request) -> str:
    """The body's codec; UTF-8 tolerates a byte order mark, as .NET clients send one."""
    name = request.charset or "utf-8"
    try:
        return "utf-8-sig" if codecs.lookup(name).name == "utf-8" else name
    except LookupError:
        raise RestError(415, f"Unknown charset {name[:40]!r}; send UTF-8.") from None


async def _json_object(request: web.Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise RestError(415, "Content-Type must be application/json.")
    charset = _charset(request)
    raw = await _body(request)
    try:
        text = raw.decode(charset)
    except LookupError:  # a codec that is not a text encoding: rot13, base64, zlib...
        raise RestError(415, f"Unknown charset {charset[:40]!r}; send UTF-8.") from None
    except UnicodeError:
        raise RestError(
            400, f"The request body is not valid {request.charset or 'UTF-8'} text."
        ) from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RestError(400, f"The request body is not valid JSON: {exc}.") from None
    except (ValueError, RecursionError):
        # Integers beyond Python's digit limit, or nesting deeper than the recursion limit.
        raise RestError(
            400, "The request body is not valid JSON (a value is too large or too deep)."
        ) from None
    if not isinstance(payload, dict):
        raise RestError(400, "The request body must be a JSON object.")
    return payload


def _field(exc: v.FieldError) -> RestError:
    return RestError(400, exc.message, exc.field)


def _one_parameter(
    request: web.Request, allowed: tuple[str, ...], required: bool
) -> tuple[str, str] | None:
    query = request.query
    if len(query) > 1:
        raise RestError(400, "Only one query parameter may be passed per request.")
    if not query:
        if required:
            raise RestError(400, f"One of {', '.join(allowed)} is required.")
        return None
    name, value = next(iter(query.items()))
    if name not in allowed:
        raise RestError(400, f"Unknown query parameter; use one of {', '.join(allowed)}.", name)
    if not value.strip():
        raise RestError(400, f"{name} must not be empty.", name)
    return (name, value.strip())


# ---- handlers ------------------------------------------------------------------------------


async def access_token(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}

    def token_error(error: str, description: str) -> web.Response:
        return json_response({"error": error, "error_description": description}, 400, headers)

    if request.content_type != FORM_TYPE:
        return token_error("invalid_request", f"Content-Type must be {FORM_TYPE}.")
    try:
        raw = await read_limited(request, 16 * 1024)
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except BodyTooLarge:
        return token_error("invalid_request", "The request body is too large.")
    except UnicodeDecodeError:
        return token_error("invalid_request", "The request body is not valid UTF-8.")
    except web.RequestPayloadError:
        raise RestError(400, BODY_UNREADABLE, close=True) from None
    form = dict(pairs)
    if len(form) != len(pairs):
        # RFC 6749 section 3.2: parameters must not be included more than once.
        repeated = sorted({name for name, _ in pairs if sum(n == name for n, _ in pairs) > 1})
        return token_error("invalid_request", f"Repeated parameter: {', '.join(repeated)[:80]}.")
    try:
        token = state.auth.issue_token(form)
    except TokenError as exc:
        return token_error(exc.error, exc.description)
    return json_response(token, 200, headers)


def _draft_fields(body: dict[str, Any], state: SandboxState, source_field: str) -> Draft:
    now = datetime.now(UTC)
    text = v.message_text(body.get("Message"))
    when = v.send_at(body.get("SendAt"), now)
    source = v.sender(body.get(source_field), source_field)
    reply_type, reply_path = v.reply_options(body.get("ReplyType"), body.get("ReplyPath"))
    return Draft(
        type="SMS",
        text=text,
        service_id=SERVICE_REST,
        source=source,
        send_at_us=datetime_to_us(when) if when else None,
        external_system_id=v.optional_text(
            body.get("ExternalSystemId"), "ExternalSystemId", v.MAX_EXTERNAL_ID
        ),
        tags=v.optional_text(body.get("Tags"), "Tags", v.MAX_TAGS),
        reply_type=reply_type,
        reply_path=reply_path,
    )


async def simple_send(request: web.Request) -> web.StreamResponse:
    account = _account(request)
    body = await _json_object(request)
    state = _state(request)
    try:
        recipient = v.phone_number(body.get("Recipient"), "Recipient")
        draft = _draft_fields(
            {k: body.get(k) for k in ("Message", "SendAt", "From")}, state, "From"
        )
    except v.FieldError as exc:
        raise _field(exc) from None
    row = state.engine.lodge(account, draft, recipient)
    return success({"Message": Engine.status_message(row, full=False)})


async def send(request: web.Request) -> web.StreamResponse:
    account = _account(request)
    body = await _json_object(request)
    state = _state(request)
    try:
        recipients = v.recipients(body.get("Recipients"))
        draft = _draft_fields(body, state, "Source")
    except v.FieldError as exc:
        raise _field(exc) from None
    if len(recipients) == 1:
        row = state.engine.lodge(account, draft, recipients[0])
        return success({"Message": Engine.status_message(row)})
    code = state.engine.start_batch(account, draft, recipients)
    state.batch_wakeup.set()
    return success({"BatchCode": code})


async def status(request: web.Request) -> web.StreamResponse:
    account = _account(request)
    param = _one_parameter(request, STATUS_PARAMS, required=True)
    assert param is not None
    name, value = param
    engine = _state(request).engine
    rows: list[sqlite3.Row] | None
    if name == "message_id":
        rows = engine.status_by_message_id(account, value)
        if rows is None:
            raise RestError(404, f"No message has MessageId {value[:40]!r}.", name)
    elif name == "batch_code":
        rows = engine.status_by_batch(account, value)
        if rows is None:
            raise RestError(404, f"No batch has BatchCode {value[:40]!r}.", name)
    else:
        rows = engine.status_by_external_id(account, value)
    return json_response([Engine.status_message(row) for row in rows])


def _log_query(param: tuple[str, str] | None) -> LogQuery:
    if param is None:
        return LogQuery(page=1)
    name, value = param
    if name == "page":
        return LogQuery(page=_whole_number(value, name, 10_000_000))
    if name == "since":
        try:
            return LogQuery(since_us=datetime_to_us(v.parse_iso_time(value, "since")))
        except v.FieldError as exc:
            raise _field(exc) from None
    if name == "recipient":
        try:
            return LogQuery(recipient=v.phone_number(value, "recipient"))
        except v.FieldError as exc:
            raise _field(exc) from None
    if name == "message_id":
        return LogQuery(message_id=value)
    return LogQuery(batch_code=value)


async def logs(request: web.Request) -> web.StreamResponse:
    account = _account(request)
    query = _log_query(_one_parameter(request, LOG_PARAMS, required=False))
    engine = _state(request).engine
    total, rows = engine.logs(account, query)
    return json_response({"totalRecords": total, "messages": [engine.log_record(r) for r in rows]})


async def balance(request: web.Request) -> web.StreamResponse:
    account = _account(request)
    if request.body_exists and request.content_type not in (FORM_TYPE, "application/octet-stream"):
        raise RestError(415, f"Content-Type must be {FORM_TYPE}.")
    await _body(request)
    funds = _state(request).engine.funds(account)
    return success(
        {"Balance": funds.balance, "Currency": funds.currency, "MessageCredits": funds.credits}
    )


async def account_info(request: web.Request) -> web.StreamResponse:
    """`GET /v2/Account/Info`, as the real service documents it: a bare object (no envelope);
    `MessageCredits` only for a prepaid account."""
    account = _account(request)
    if request.query:
        name = next(iter(request.query))
        raise RestError(400, "Account/Info takes no query parameters.", name)
    funds = _state(request).engine.funds(account)
    info: dict[str, Any] = {
        "AccountName": funds.name,
        "AccountStatus": "Active",
        "AccountType": funds.type_name,
    }
    if funds.credits is not None:
        info["MessageCredits"] = funds.credits
    return json_response(info)


def _backfill_time(
    value: str | None, name: str, state: SandboxState, *, end: bool = False
) -> datetime | None:
    """A bound of the reply window; a bare date means that whole day in the account's zone.

    So `startDate=D&endDate=D` is the replies of day D: a date-only end is the start of
    the following day, and the window is half-open (`startDate <= received < endDate`).
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        if len(text) == 10:
            day = date.fromisoformat(text) + timedelta(days=1 if end else 0)
            return datetime.combine(day, time(), tzinfo=state.zone).astimezone(UTC)
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=state.zone)
        return moment.astimezone(UTC)
    except ValueError:
        hint = " (a '+' in a query string must be sent as %2B)" if " " in text else ""
        raise RestError(400, f"{name} must be an ISO 8601 date or time{hint}.", name) from None
    except OverflowError:
        raise RestError(400, f"{name} is out of range.", name) from None


def _whole_number(value: str, name: str, maximum: int) -> int:
    # The length check comes first: int() refuses strings of more than 4,300 digits.
    if not value.isascii() or not value.isdigit() or len(value) > 12:
        raise RestError(400, f"{name} must be a whole number from 1 to {maximum}.", name)
    number = int(value)
    if not 1 <= number <= maximum:
        raise RestError(400, f"{name} must be a whole number from 1 to {maximum}.", name)
    return number


def _positive(value: str | None, name: str, default: int, maximum: int) -> int:
    if value is None or value == "":
        return default
    return _whole_number(value, name, maximum)


async def replies_by_date(request: web.Request) -> web.StreamResponse:
    account = _account(request)
    state = _state(request)
    known = {"startDate", "endDate", "Page", "PageSize"}
    for name in request.query:
        if name not in known:
            raise RestError(400, f"Unknown query parameter; use {', '.join(sorted(known))}.", name)
    for name in known:
        if len(request.query.getall(name, [])) > 1:
            raise RestError(400, f"{name} may be given once.", name)
    start = _backfill_time(request.query.get("startDate"), "startDate", state)
    end = _backfill_time(request.query.get("endDate"), "endDate", state, end=True)
    if start is not None and end is not None and end < start:
        raise RestError(400, "endDate is before startDate.", "endDate")
    # An omitted bound never contradicts the given one: no end runs until now (or is empty
    # when the start is still ahead), no start means the day before the end.
    now = datetime.now(UTC)
    if end is None:
        end = max(now + timedelta(seconds=1), start or now)
    if start is None:
        start = min(now, end) - timedelta(days=1)
    page = _positive(request.query.get("Page"), "Page", 1, 1_000_000)
    size = _positive(request.query.get("PageSize"), "PageSize", 100, 1000)
    total, rows = state.engine.replies_between(
        account, datetime_to_us(start), datetime_to_us(end), page, size
    )
    items = [
        {
            "MessageId": row["message_id"],
            "From": row["from_number"],
            "To": row["to_number"],
            "MessageText": row["text"],
            # Whole seconds, like the webhook's #RCVDDTS#, so clients can match the two.
            "DateReceived": iso(row["received_us"], state.zone, "seconds"),
        }
        for row in rows
    ]
    return json_response(
        {
            "Items": items,
            "PageNumber": page,
            "PageSize": size,
            "TotalRecords": total,
            "TotalPages": math.ceil(total / size) if total else 0,
        }
    )


# ---- wiring --------------------------------------------------------------------------------


@web.middleware
async def rest_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Failure envelopes for every `/v2/` error (any letter case), never a traceback."""
    if request.path[:4].lower() != "/v2/":
        return await handler(request)

    async def handle() -> web.StreamResponse:
        try:
            return await handler(request)
        except RestError as exc:
            response = failure(exc.status, exc.message, exc.field, exc.headers)
            if exc.close:
                response.force_close()
            return response

    return await answered(request, handle, _failure, "gateway")


def _failure(status: int, message: str, headers: dict[str, str] | None) -> web.Response:
    return failure(status, message, headers=headers)


#: Every REST route (method, path, handler). Paths match in any letter case, as the real
#: service's do; they are written here as the spec and the real documentation write them.
ROUTES: Final = (
    ("POST", "/v2/oauth/access_token", access_token),
    ("POST", "/v2/message/simple_send", simple_send),
    ("POST", "/v2/message/send", send),
    ("GET", "/v2/message/status", status),
    ("GET", "/v2/message/logs", logs),
    ("POST", "/v2/account/balance", balance),
    ("GET", "/v2/Account/Info", account_info),
    ("GET", "/v2/Replies/GetByDate", replies_by_date),
)


def register(app: web.Application) -> None:
    for method, path, handler in ROUTES:
        if method == "GET":
            app.router.add_get(any_case(path), handler)  # and HEAD, as before
        else:
            app.router.add_route(method, any_case(path), handler)
