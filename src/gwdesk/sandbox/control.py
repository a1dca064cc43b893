"""Sandbox-only control endpoints under `/sandbox/`: replies, keywords, attempts, auto-reply,
an account's type, credits and the words its account resources answer with, and who a
simulated delivery fails for.

No authentication: the sandbox is a loopback tool for tests and demos. JSON in and
out; anything refused is a 4xx with `{"error": "..."}`, never a traceback. Objects
that mirror the gateway's (replies, attempts) use its PascalCase names; settings
(keywords, auto-reply) use the same lower-case names in requests and answers, so
what a GET returns can be sent back.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from aiohttp import web

from gwdesk.sandbox import autoreply
from gwdesk.sandbox import validation as v
from gwdesk.sandbox.autoreply import AUTO_REPLIER
from gwdesk.sandbox.db import (
    ACCOUNT_TYPES,
    ACCOUNT_WORDS,
    POSTPAID,
    PREPAID,
    Account,
    set_account_type,
    set_account_words,
)
from gwdesk.sandbox.engine import Engine, datetime_to_us, iso
from gwdesk.sandbox.http_util import (
    JSON_TYPE,
    BodyTooLarge,
    Handler,
    answered,
    json_response,
    read_limited,
)
from gwdesk.sandbox.state import STATE, SandboxState
from gwdesk.sandbox.webhooks import plan_calls

PREFIX: Final = "/sandbox/"
BODY_LIMIT: Final = 64 * 1024
REPLY_FIELDS: Final = frozenset({"message_id", "text", "from", "to", "sent_at", "account"})
KEYWORD_FIELDS: Final = frozenset({"keyword", "url", "account"})
AUTO_REPLY_FIELDS: Final = frozenset({"enabled", "delay", "rate"})
ACCOUNT_FIELDS: Final = frozenset({"account", "type", "credits", *ACCOUNT_WORDS})
DELIVERY_FIELDS: Final = frozenset({"failing", "failure_rate"})
#: Numbers `PUT /sandbox/deliveries` may name as failing.
MAX_FAILING: Final = 100_000
MAX_CREDITS: Final = 1_000_000_000
#: The longest account word (`name`, `type_name`, `currency`) the control API takes.
MAX_ACCOUNT_WORD: Final = 1000
#: The number a customer texts may be a short code, so 3 digits are enough here.
TO_NUMBER_RE: Final = re.compile(r"\+?(\d{3,15})")
KEYWORD_RE: Final = re.compile(r"\S{1,50}")
MAX_URL: Final = 2000
DEFAULT_ATTEMPT_LIMIT: Final = 1000
MAX_ATTEMPT_LIMIT: Final = 10_000
EARLIEST_SENT: Final = datetime(2000, 1, 1, tzinfo=UTC)


class ControlError(Exception):
    """Turns into `{"error": message}` with this status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return json_response({"error": message}, status, headers)


def _state(request: web.Request) -> SandboxState:
    return request.app[STATE]


# ---- input ---------------------------------------------------------------------------------


async def _json_object(request: web.Request, allowed: frozenset[str]) -> dict[str, Any]:
    if request.content_type != JSON_TYPE:
        raise ControlError(415, "Content-Type must be application/json.")
    try:
        raw = await read_limited(request, BODY_LIMIT)
    except BodyTooLarge:
        raise ControlError(413, f"The request body is larger than {BODY_LIMIT} bytes.") from None
    try:
        payload = json.loads(raw.decode(request.charset or "utf-8"))
    except (UnicodeDecodeError, LookupError):
        raise ControlError(400, "The request body is not valid UTF-8 text.") from None
    except (ValueError, RecursionError):  # ValueError also covers ints over 4,300 digits
        raise ControlError(400, "The request body is not valid JSON.") from None
    if not isinstance(payload, dict):
        raise ControlError(400, "The request body must be a JSON object.")
    unknown = sorted(set(payload) - allowed)
    if unknown:
        raise ControlError(400, f"Unknown field {unknown[0]!r}; use {', '.join(sorted(allowed))}.")
    return payload


def _text_value(value: object, name: str, *, required: bool = True) -> str | None:
    if value is None:
        if required:
            raise ControlError(400, f"{name} is required.")
        return None
    if not isinstance(value, str):
        raise ControlError(400, f"{name} must be a string.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ControlError(400, f"{name} holds text that is not valid Unicode.") from None
    return value


def _field(call: Callable[[], Any]) -> Any:
    """Run a shared validation check, turning its FieldError into a 400."""
    try:
        return call()
    except v.FieldError as exc:
        raise ControlError(400, exc.message) from None


def _sent_at(value: object) -> int | None:
    if value is None:
        return None
    text = _text_value(value, "sent_at")
    try:
        moment = v.parse_iso_time(text, "sent_at")
    except v.FieldError as exc:
        raise ControlError(400, exc.message) from None
    except OverflowError:
        raise ControlError(400, "sent_at is out of range.") from None
    if moment < EARLIEST_SENT:
        raise ControlError(400, "sent_at must not be before 2000.")
    return datetime_to_us(moment)


def _to_number(value: object, name: str = "to") -> str:
    text = _text_value(value, name)
    assert text is not None
    match = TO_NUMBER_RE.fullmatch(text.strip())
    if match is None:
        raise ControlError(400, f"{name} must be a number of 3 to 15 digits: {text[:32]!r}.")
    return match.group(1)


def _account(state: SandboxState, value: object) -> Account:
    """The named account, or the sandbox's main account when none is named."""
    name = _text_value(value, "account", required=False) or state.config.username
    row = state.conn.execute(
        "SELECT id, username, default_from FROM accounts WHERE username = ?", (name,)
    ).fetchone()
    if row is None:
        raise ControlError(404, f"No account is named {name[:40]!r}.")
    return Account(row["id"], row["username"], row["default_from"])


def _is_http_url(text: str) -> bool:
    try:
        return v.is_http_url(text)
    except ValueError:  # urlsplit refuses some malformed addresses ("http://[::1/x")
        return False


def _single_query(request: web.Request, allowed: tuple[str, ...]) -> dict[str, str]:
    for name in request.query:
        if name not in allowed:
            raise ControlError(400, f"Unknown query parameter {name!r}; use {', '.join(allowed)}.")
        if len(request.query.getall(name)) > 1:
            raise ControlError(400, f"{name} may be given once.")
    return dict(request.query)


# ---- shapes --------------------------------------------------------------------------------


def reply_record(engine: Engine, reply: sqlite3.Row) -> dict[str, Any]:
    """A reply as the control API shows it, with the calls it causes."""
    calls = plan_calls(engine, reply)
    webhook = next((c for c in calls if c.kind == "reply"), None)
    forward = next((c for c in calls if c.kind == "keyword"), None)
    return {
        "ReplyId": reply["reply_id"],
        "MessageId": reply["message_id"],
        "From": reply["from_number"],
        "To": reply["to_number"],
        "Text": reply["text"],
        "SentAt": iso(reply["sent_us"], engine.zone, "seconds"),
        "ReceivedAt": iso(reply["received_us"], engine.zone, "seconds"),
        "WebhookMethod": webhook.method if webhook else None,
        "WebhookUrl": webhook.url if webhook else None,
        "Keyword": forward.keyword if forward else None,
        "KeywordUrl": forward.url if forward else None,
    }


def attempt_record(row: sqlite3.Row, engine: Engine) -> dict[str, Any]:
    return {
        "Id": row["id"],
        "ReplyId": row["reply_id"],
        "Kind": row["kind"],
        "Attempt": row["attempt"],
        "At": iso(row["at_us"], engine.zone),
        "Method": row["method"],
        "Url": row["url"],
        "Body": row["body"],
        "HttpStatus": row["http_status"],
        "Response": row["response"],
        "Error": row["error"],
        "Ok": bool(row["ok"]),
    }


def _keyword_record(row: sqlite3.Row, account: Account) -> dict[str, Any]:
    return {"keyword": row["keyword"], "url": row["url"], "account": account.username}


# ---- replies -------------------------------------------------------------------------------


async def create_reply(request: web.Request) -> web.StreamResponse:
    """A customer's reply to a lodged message, or an unsolicited message to a number."""
    state = _state(request)
    body = await _json_object(request, REPLY_FIELDS)
    text = _field(lambda: v.message_text(_text_value(body.get("text"), "text"), "text"))
    sent_us = _sent_at(body.get("sent_at"))
    raw_from = body.get("from")
    customer = None if raw_from is None else _field(lambda: v.phone_number(raw_from, "from"))
    engine = state.engine
    message_id = body.get("message_id")
    if message_id is not None:
        if not isinstance(message_id, str) or not message_id.strip():
            raise ControlError(400, "message_id must be a non-empty string.")
        for name in ("to", "account"):
            if body.get(name) is not None:
                raise ControlError(400, f"{name} comes from the message; leave it out.")
        message = engine.message(message_id.strip())
        if message is None:
            raise ControlError(404, f"No message has MessageId {message_id[:40]!r}.")
        reply = engine.create_reply(
            text=text, message=message, from_number=customer, sent_us=sent_us
        )
    else:
        if customer is None:
            raise ControlError(400, "from is required when there is no message_id.")
        if body.get("to") is None:
            raise ControlError(400, "to is required when there is no message_id.")
        to_number = _to_number(body.get("to"))
        account = _account(state, body.get("account"))
        reply = engine.create_reply(
            text=text,
            message=None,
            account_id=account.id,
            from_number=customer,
            to_number=to_number,
            sent_us=sent_us,
        )
    return json_response(reply_record(engine, reply), 201)


async def reply_attempts(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    reply_id = request.match_info["reply_id"]
    known = state.conn.execute("SELECT 1 FROM replies WHERE reply_id = ?", (reply_id,)).fetchone()
    if known is None:
        raise ControlError(404, f"No reply has ReplyId {reply_id[:40]!r}.")
    rows = state.conn.execute(
        "SELECT * FROM webhook_attempts WHERE reply_id = ? ORDER BY id", (reply_id,)
    ).fetchall()
    return json_response([attempt_record(row, state.engine) for row in rows])


async def webhook_attempts(request: web.Request) -> web.StreamResponse:
    """The newest attempts (all of one reply's with `reply_id`), oldest first."""
    state = _state(request)
    query = _single_query(request, ("reply_id", "limit"))
    limit = DEFAULT_ATTEMPT_LIMIT
    if "limit" in query:
        text = query["limit"]
        if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_ATTEMPT_LIMIT:
            raise ControlError(400, f"limit must be a whole number from 1 to {MAX_ATTEMPT_LIMIT}.")
        limit = int(text)
    if "reply_id" in query:
        sql = "SELECT * FROM webhook_attempts WHERE reply_id = ? ORDER BY id DESC LIMIT ?"
        params: tuple[Any, ...] = (query["reply_id"], limit)
    else:
        sql = "SELECT * FROM webhook_attempts ORDER BY id DESC LIMIT ?"
        params = (limit,)
    rows = state.conn.execute(sql, params).fetchall()
    return json_response([attempt_record(row, state.engine) for row in reversed(rows)])


# ---- keywords ------------------------------------------------------------------------------


async def list_keywords(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    account = _account(state, _single_query(request, ("account",)).get("account"))
    rows = state.conn.execute(
        "SELECT keyword, url FROM keywords WHERE account_id = ? ORDER BY keyword", (account.id,)
    ).fetchall()
    return json_response([_keyword_record(row, account) for row in rows])


async def put_keyword(request: web.Request) -> web.StreamResponse:
    """Add a keyword, or point an existing one at a new address."""
    state = _state(request)
    body = await _json_object(request, KEYWORD_FIELDS)
    raw_keyword = _text_value(body.get("keyword"), "keyword")
    assert raw_keyword is not None
    if not KEYWORD_RE.fullmatch(raw_keyword.strip()):
        raise ControlError(400, "keyword must be one word of 1 to 50 characters.")
    keyword = raw_keyword.strip().upper()
    url = _text_value(body.get("url"), "url")
    assert url is not None
    url = url.strip()
    if len(url) > MAX_URL or not _is_http_url(url):
        raise ControlError(400, f"url must be an http(s) URL of at most {MAX_URL} characters.")
    account = _account(state, body.get("account"))
    existed = state.conn.execute(
        "SELECT 1 FROM keywords WHERE account_id = ? AND keyword = ?", (account.id, keyword)
    ).fetchone()
    state.conn.execute(
        "INSERT INTO keywords(account_id, keyword, url) VALUES (?, ?, ?) "
        "ON CONFLICT(account_id, keyword) DO UPDATE SET url = excluded.url",
        (account.id, keyword, url),
    )
    record = {"keyword": keyword, "url": url, "account": account.username}
    return json_response(record, 200 if existed else 201)


async def delete_keyword(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    account = _account(state, _single_query(request, ("account",)).get("account"))
    keyword = request.match_info["keyword"].strip().upper()
    cursor = state.conn.execute(
        "DELETE FROM keywords WHERE account_id = ? AND keyword = ?", (account.id, keyword)
    )
    if cursor.rowcount == 0:
        raise ControlError(404, f"No keyword {keyword[:50]!r} for account {account.username!r}.")
    return web.Response(status=204)


# ---- auto-reply ----------------------------------------------------------------------------


async def get_auto_reply(request: web.Request) -> web.StreamResponse:
    return json_response(request.app[AUTO_REPLIER].settings())


def _number(value: object, name: str, low: float, high: float, *, open_low: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ControlError(400, f"{name} must be a number.")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or number > high or number < low or (open_low and number == low):
        side = "above" if open_low else "from"
        raise ControlError(400, f"{name} must be a number {side} {low:g} up to {high:g}.")
    return number


async def put_auto_reply(request: web.Request) -> web.StreamResponse:
    body = await _json_object(request, AUTO_REPLY_FIELDS)
    if not body:
        raise ControlError(400, f"Give at least one of {', '.join(sorted(AUTO_REPLY_FIELDS))}.")
    enabled = body.get("enabled")
    if enabled is not None and not isinstance(enabled, bool):
        raise ControlError(400, "enabled must be true or false.")
    delay = body.get("delay")
    rate = body.get("rate")
    replier = request.app[AUTO_REPLIER]
    replier.configure(
        enabled=enabled,
        delay=None
        if delay is None
        else _number(delay, "delay", 0.0, autoreply.MAX_DELAY, open_low=False),
        rate=None
        if rate is None
        else _number(rate, "rate", 0.0, autoreply.MAX_RATE, open_low=True),
    )
    return json_response(replier.settings())


# ---- account type, credits and words -------------------------------------------------------


def _account_record(state: SandboxState, account: Account) -> dict[str, Any]:
    funds = state.engine.funds(account)
    return {
        "account": account.username,
        "name": funds.name,
        "type": funds.account_type,
        "type_name": funds.type_name,
        "credits": funds.credits,
        "balance": funds.balance,
        "currency": funds.currency,
    }


def _account_words(body: dict[str, Any]) -> dict[str, str | None]:
    """The account words the body gives (a string, or null for the default)."""
    words: dict[str, str | None] = {}
    for word in ACCOUNT_WORDS:
        if word in body:
            value = _text_value(body[word], word, required=False)
            if value is not None and len(value) > MAX_ACCOUNT_WORD:
                raise ControlError(400, f"{word} must be at most {MAX_ACCOUNT_WORD} characters.")
            words[word] = value
    return words


async def get_account(request: web.Request) -> web.StreamResponse:
    state = _state(request)
    account = _account(state, _single_query(request, ("account",)).get("account"))
    return json_response(_account_record(state, account))


async def put_account(request: web.Request) -> web.StreamResponse:
    """Make an account prepaid (with `credits`, or those it has) or postpaid (no credits),
    and change the words its account resources answer with (`name`, `type_name`,
    `currency`; null: the default)."""
    state = _state(request)
    body = await _json_object(request, ACCOUNT_FIELDS)
    account = _account(state, body.get("account"))
    words = _account_words(body)
    kind = _text_value(body.get("type"), "type", required=False)
    credits = body.get("credits")
    if kind is None and credits is None and not words:
        raise ControlError(400, "Give type, credits, name, type_name or currency.")
    if kind is not None or credits is not None:
        _set_type(state, account, kind, credits)
    set_account_words(state.conn, account.id, words)
    return json_response(_account_record(state, account))


def _set_type(state: SandboxState, account: Account, kind: str | None, credits: object) -> None:
    current = state.engine.funds(account).account_type
    kind = current if kind is None else kind.strip().lower()
    if kind not in ACCOUNT_TYPES:
        raise ControlError(400, f"type must be {PREPAID} or {POSTPAID}.")
    if credits is not None:
        if isinstance(credits, bool) or not isinstance(credits, int):
            raise ControlError(400, "credits must be a whole number.")
        if not 0 <= credits <= MAX_CREDITS:
            raise ControlError(400, f"credits must be from 0 to {MAX_CREDITS:,}.")
        if kind == POSTPAID:
            raise ControlError(400, "A postpaid account has no credits; leave credits out.")
    set_account_type(state.conn, account.id, kind, credits)


# ---- delivery outcomes ---------------------------------------------------------------------


def _deliveries(engine: Engine) -> dict[str, Any]:
    return {
        "simulate": engine.simulate_delivery,
        "failure_rate": engine.delivery_failure_rate,
        "failing": sorted(engine.failing_numbers),
    }


async def get_deliveries(request: web.Request) -> web.StreamResponse:
    return json_response(_deliveries(_state(request).engine))


async def put_deliveries(request: web.Request) -> web.StreamResponse:
    """Say how simulated deliveries end from now on: `failing`, numbers whose messages
    all fail (a list replaces the last), and `failure_rate`, the share of the others
    that fail. Decided when a message is created, so it applies to later sends."""
    engine = _state(request).engine
    body = await _json_object(request, DELIVERY_FIELDS)
    if not body:
        raise ControlError(400, "Give failing, failure_rate or both.")
    if not engine.simulate_delivery:
        raise ControlError(409, "Delivery simulation is off: start the sandbox with it on.")
    failing = body.get("failing")
    if failing is not None:
        if not isinstance(failing, list) or len(failing) > MAX_FAILING:
            raise ControlError(400, f"failing must be a list of at most {MAX_FAILING:,} numbers.")
        numbers = frozenset(_to_number(n, "each of failing") for n in failing)
    rate = body.get("failure_rate")
    if rate is not None:
        engine.delivery_failure_rate = _number(rate, "failure_rate", 0.0, 1.0, open_low=False)
    if failing is not None:
        engine.failing_numbers = numbers
    return json_response(_deliveries(engine))


# ---- wiring --------------------------------------------------------------------------------


@web.middleware
async def control_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """`{"error": ...}` answers for every `/sandbox/` failure, never a traceback."""
    if not request.path.startswith(PREFIX):
        return await handler(request)

    async def handle() -> web.StreamResponse:
        try:
            return await handler(request)
        except ControlError as exc:
            return _error(exc.status, exc.message)

    return await answered(request, handle, _error, "sandbox")


def register(app: web.Application) -> None:
    """Add the `/sandbox/` routes, their error answers, and the auto-replier they control."""
    autoreply.register(app)
    app.middlewares.append(control_errors)
    router = app.router
    router.add_post("/sandbox/replies", create_reply)
    router.add_get("/sandbox/replies/{reply_id}/attempts", reply_attempts)
    router.add_get("/sandbox/webhook-attempts", webhook_attempts)
    router.add_get("/sandbox/keywords", list_keywords)
    router.add_post("/sandbox/keywords", put_keyword)
    router.add_delete("/sandbox/keywords/{keyword}", delete_keyword)
    router.add_get("/sandbox/auto-reply", get_auto_reply)
    router.add_put("/sandbox/auto-reply", put_auto_reply)
    router.add_get("/sandbox/account", get_account)
    router.add_put("/sandbox/account", put_account)
    router.add_get("/sandbox/deliveries", get_deliveries)
    router.add_put("/sandbox/deliveries", put_deliveries)
