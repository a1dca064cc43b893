"""Reply webhooks and keyword forwarding, with the contract's retries.

Planning (which calls a reply causes, to which URL, with which body) is pure and
shared with the control API, so a caller making a reply is told what will be
called. Delivery runs in background tasks, so the request that made the reply is
answered at once; every attempt is recorded in `webhook_attempts`.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

import aiohttp
from aiohttp import web
from yarl import URL

from gwdesk.domain.webhook_time import format_webhook_time
from gwdesk.sandbox.engine import Engine, iso, keyword_of, now_us, us_to_datetime
from gwdesk.sandbox.state import STATE, SandboxState
from gwdesk.sandbox.validation import WEBHOOK_REPLY_TYPES

PLACEHOLDER_RE: Final = re.compile(r"#(FROM|TO|MSG|SENTDTS|RCVDDTS)#")
_ESCAPE_RE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
#: Characters a URL may carry as they are; anything else in a template is percent-encoded.
_URL_SAFE: Final = "-._~:/?@!$&'()*+,;=[]"
MAX_ATTEMPTS: Final = 6
"""The first try and up to 5 retries (contract)."""
RESPONSE_READ_LIMIT: Final = 4096
RESPONSE_EXCERPT: Final = 500
ERROR_EXCERPT: Final = 300
CONCURRENT_CALLS: Final = 16
"""Calls in flight at once; the rest wait their turn instead of opening a socket each."""
FORM_TYPE: Final = "application/x-www-form-urlencoded"
JSON_TYPE: Final = "application/json"
USER_AGENT: Final = "gwdesk-sandbox-webhooks/1"


@dataclass(frozen=True, slots=True)
class WebhookCall:
    """One HTTP call a reply causes: a reply webhook or a keyword forward."""

    kind: str
    """`reply` or `keyword`, as recorded in `webhook_attempts.kind`."""
    method: str
    url: str
    body: str | None = None
    content_type: str | None = None
    keyword: str | None = None


@dataclass(frozen=True, slots=True)
class AttemptResult:
    http_status: int | None
    response: str | None
    error: str | None
    ok: bool


# ---- planning ------------------------------------------------------------------------------


def quote_static(text: str) -> str:
    """Make a template's own text fit for a URL without changing what it means.

    Existing `%XX` escapes and URL delimiters stay; spaces, non-ASCII text and a
    `#` (HTTP never sends a fragment) are percent-encoded, as is a stray `%`.
    """
    out: list[str] = []
    pos = 0
    for match in _ESCAPE_RE.finditer(text):
        out.append(quote(text[pos : match.start()], safe=_URL_SAFE))
        out.append(match.group(0))
        pos = match.end()
    out.append(quote(text[pos:], safe=_URL_SAFE))
    return "".join(out)


def substitute(template: str, values: Mapping[str, str]) -> str:
    """Replace `#NAME#` placeholders with URL-encoded values, anywhere in the template."""
    out: list[str] = []
    pos = 0
    for match in PLACEHOLDER_RE.finditer(template):
        out.append(quote_static(template[pos : match.start()]))
        out.append(quote(values[match.group(1)], safe=""))
        pos = match.end()
    out.append(quote_static(template[pos:]))
    return "".join(out)


def placeholder_values(reply: sqlite3.Row, engine: Engine) -> dict[str, str]:
    zone = engine.zone
    return {
        "FROM": reply["from_number"],
        "TO": reply["to_number"],
        "MSG": reply["text"],
        "SENTDTS": format_webhook_time(us_to_datetime(reply["sent_us"], zone), zone),
        "RCVDDTS": format_webhook_time(us_to_datetime(reply["received_us"], zone), zone),
    }


def reply_webhook_call(
    message: sqlite3.Row, reply: sqlite3.Row, engine: Engine
) -> WebhookCall | None:
    """The Option 1 call for a reply to `message`, if its ReplyType asks for one."""
    reply_type = (message["reply_type"] or "").upper()
    if reply_type not in WEBHOOK_REPLY_TYPES or not message["reply_path"]:
        return None
    url = substitute(message["reply_path"], placeholder_values(reply, engine))
    if reply_type == "HTTPPOST":
        address, _, form = url.partition("?")
        return WebhookCall("reply", "POST", address, form, FORM_TYPE)
    return WebhookCall("reply", "GET", url)


def keyword_forward_call(reply: sqlite3.Row, engine: Engine) -> WebhookCall | None:
    """The Option 2 call, if the reply's first word is a keyword of its account."""
    keyword = keyword_of(reply["text"])
    if not keyword:
        return None
    row = engine.conn.execute(
        "SELECT keyword, url FROM keywords WHERE account_id = ? AND keyword = ?",
        (reply["account_id"], keyword),
    ).fetchone()
    if row is None:
        return None
    payload = {
        "ReplyId": reply["reply_id"],
        "From": reply["from_number"],
        "To": reply["to_number"],
        "Message": reply["text"],
        "Keyword": row["keyword"],
        "SentAt": iso(reply["sent_us"], engine.zone, "seconds"),
        "ReceivedAt": iso(reply["received_us"], engine.zone, "seconds"),
        "OriginalMessageId": reply["message_id"],
    }
    body = json.dumps(payload, ensure_ascii=False)
    return WebhookCall("keyword", "POST", quote_static(row["url"]), body, JSON_TYPE, row["keyword"])


def plan_calls(engine: Engine, reply: sqlite3.Row) -> list[WebhookCall]:
    """Every call a new reply causes: its reply webhook and its keyword forward, if any."""
    calls: list[WebhookCall] = []
    if reply["message_id"] is not None:
        message = engine.message(reply["message_id"])
        if message is not None:
            webhook = reply_webhook_call(message, reply, engine)
            if webhook is not None:
                calls.append(webhook)
    forward = keyword_forward_call(reply, engine)
    if forward is not None:
        calls.append(forward)
    return calls


# ---- delivery ------------------------------------------------------------------------------


async def _read_bounded(stream: aiohttp.StreamReader, limit: int) -> bytes:
    """Up to `limit` + 1 bytes of a body: enough to judge it, never a flood."""
    data = bytearray()
    while len(data) <= limit:
        chunk = await stream.read(limit + 1 - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return (f"{type(exc).__name__}: {text}" if text else type(exc).__name__)[:ERROR_EXCERPT]


def is_ok_answer(status: int, body: bytes) -> bool:
    """Contract: a 2xx answer whose body, trimmed, is `OK` (a UTF-8 BOM is tolerated)."""
    return 200 <= status < 300 and body.decode("utf-8-sig", "replace").strip() == "OK"


class WebhookDispatcher:
    """Delivers each reply's calls in the background, retrying per the contract."""

    def __init__(self, state: SandboxState) -> None:
        self._state = state
        self._session: aiohttp.ClientSession | None = None
        self._limit = asyncio.Semaphore(CONCURRENT_CALLS)
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, app: web.Application) -> None:
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=None),
            headers={"User-Agent": USER_AGENT},
            connector=aiohttp.TCPConnector(limit=CONCURRENT_CALLS),
        )

    async def close(self, app: web.Application) -> None:
        """Stop deliveries before the session (and then the database) goes away."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
            self._session = None

    def on_reply(self, reply: sqlite3.Row) -> None:
        """Engine listener: schedule the reply's calls; never blocks the request."""
        for call in plan_calls(self._state.engine, reply):
            reply_id = reply["reply_id"]
            task = self._state.spawn(
                self._deliver(reply_id, call), f"webhook-{call.kind}-{reply_id}"
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _deliver(self, reply_id: str, call: WebhookCall) -> None:
        base = self._state.config.webhook_retry_base
        for attempt in range(1, MAX_ATTEMPTS + 1):
            if attempt > 1:
                await asyncio.sleep(base * 2 ** (attempt - 2))
            started = now_us()
            result = await self._attempt(call)
            self._record(reply_id, call, attempt, started, result)
            if result.ok:
                return

    async def _attempt(self, call: WebhookCall) -> AttemptResult:
        timeout = self._state.config.webhook_timeout
        headers = {"Content-Type": call.content_type} if call.content_type else None
        data = call.body.encode("utf-8") if call.body is not None else None
        try:
            if self._session is None:
                raise RuntimeError("the webhook dispatcher is not running")
            url = URL(call.url, encoded=True)
            # The time-out starts once this call has a slot, not while it queues for one.
            async with self._limit:
                async with asyncio.timeout(timeout):
                    async with self._session.request(
                        call.method, url, data=data, headers=headers, allow_redirects=False
                    ) as response:
                        raw = await _read_bounded(response.content, RESPONSE_READ_LIMIT)
                        status = response.status
        except TimeoutError:
            return AttemptResult(None, None, f"no answer within {timeout:g} s", False)
        except (aiohttp.ClientError, ValueError, OSError, RuntimeError) as exc:
            return AttemptResult(None, None, _describe(exc), False)
        excerpt = raw.decode("utf-8", "replace")[:RESPONSE_EXCERPT]
        return AttemptResult(status, excerpt, None, is_ok_answer(status, raw))

    def _record(
        self, reply_id: str, call: WebhookCall, attempt: int, at_us: int, result: AttemptResult
    ) -> None:
        self._state.conn.execute(
            "INSERT INTO webhook_attempts(reply_id, kind, method, url, body, attempt, at_us, "
            "http_status, response, error, ok) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                reply_id, call.kind, call.method, call.url, call.body, attempt, at_us,
                result.http_status, result.response, result.error, int(result.ok),
            ),
        )  # fmt: skip


DISPATCHER: web.AppKey[WebhookDispatcher] = web.AppKey("gwdesk_webhooks", WebhookDispatcher)


def register(app: web.Application) -> None:
    """Attach the dispatcher to the engine; its HTTP session lives as long as the app."""
    state = app[STATE]
    dispatcher = WebhookDispatcher(state)
    app[DISPATCHER] = dispatcher
    state.engine.reply_listeners.append(dispatcher.on_reply)
    app.on_startup.append(dispatcher.start)
    app.on_cleanup.append(dispatcher.close)
