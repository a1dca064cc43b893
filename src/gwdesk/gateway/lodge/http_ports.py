"""The HTTP GET and HTTP POST ports: `{legacy_url}/<Operation>` with plain parameters.

As ASP.NET expects, every parameter of the operation is sent, empty when it has no
value; a file (`objFile*`, a string array here) is sent as one base64 value or left
out. Text results come wrapped as `<string xmlns="{namespace}">...</string>`, which
is unwrapped whatever its namespace (the wrapper carries no meaning of its own); XML
results are the document itself.

A GET is bounded by the URL length servers accept (the sandbox's aiohttp takes
about 8 KB, IIS 16 KB by default, some proxies 2 KB), so on the GET port a call
that carries files or would make a URL over 2,048 characters goes by POST instead:
the same service, the same operation, a form body.

The GET port carries `Pwd` in the query string, and httpx logs every request's URL
at INFO (`gwdesk -v` shows it), so `redact_passwords_in_logs` puts a filter on the
httpx loggers that masks it.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import re
from collections.abc import Mapping
from typing import Final, Literal
from urllib.parse import quote, urlencode

import httpx
from lxml import etree

from gwdesk.gateway.errors import ProtocolError
from gwdesk.gateway.http import RawResponse, exchange
from gwdesk.gateway.lodge.catalog import Operation, ResultKind
from gwdesk.gateway.lodge.xml import MAX_ANSWER_BYTES, local_name, parse
from gwdesk.gateway.responses import error_for

log = logging.getLogger("gwdesk.gateway.lodge.client")
HttpMethod = Literal["GET", "POST"]
FORM_TYPE: Final = "application/x-www-form-urlencoded"
MAX_GET_URL: Final = 2048
#: Form bodies at least this big are encoded on a worker thread (a fax can be 14 MB).
THREAD_THRESHOLD: Final = 256 * 1024
_PASSWORD_RE: Final = re.compile(r"(?i)([?&]pwd=)[^&#\s\"']*")
_HTTP_LOGGERS: Final = ("httpx", "httpcore")


def redact(text: str) -> str:
    """`text` with the value of any `Pwd=` query parameter masked."""
    return _PASSWORD_RE.sub(r"\1********", text)


class PasswordRedactor(logging.Filter):
    """Masks `Pwd=` values in log records before any handler formats them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and "pwd=" in record.msg.lower():
            record.msg = redact(record.msg)
        if isinstance(record.args, tuple) and any("pwd=" in str(a).lower() for a in record.args):
            record.args = tuple(
                redact(str(a)) if "pwd=" in str(a).lower() else a for a in record.args
            )
        return True


def redact_passwords_in_logs() -> None:
    """Install the redactor on the HTTP libraries' loggers (once; harmless to repeat)."""
    for name in _HTTP_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, PasswordRedactor) for f in logger.filters):
            logger.addFilter(PasswordRedactor())


def form_pairs(operation: Operation, params: Mapping[str, object]) -> list[tuple[str, str]]:
    """Every parameter, in the operation's order; bytes become base64, None empty."""
    pairs: list[tuple[str, str]] = []
    for name in operation.params:
        value = params.get(name)
        if name in operation.binary:
            if isinstance(value, bytes) and value:
                pairs.append((name, base64.b64encode(value).decode("ascii")))
            continue
        if value is None:
            pairs.append((name, ""))
        elif isinstance(value, str):
            pairs.append((name, value))
        else:
            raise TypeError(f"{operation.name}: {name} must be text for the HTTP ports")
    return pairs


def _encode(pairs: list[tuple[str, str]]) -> str:
    return urlencode(pairs, quote_via=quote)


def _size(pairs: list[tuple[str, str]]) -> int:
    return sum(len(k) + len(v) for k, v in pairs)


async def call(
    http: httpx.AsyncClient,
    lodge_url: str,
    operation: Operation,
    params: Mapping[str, object],
    *,
    method: HttpMethod,
    has_files: bool = False,
) -> str | etree._Element:
    """One call: the text of a text result, or the root element of an XML result."""
    if not operation.http:
        raise ProtocolError(f"{operation.name} is offered over SOAP only.")
    pairs = form_pairs(operation, params)
    url = f"{lodge_url}/{operation.name}"
    if method == "GET" and not has_files and _size(pairs) < MAX_GET_URL:
        query = _encode(pairs)
        if len(url) + 1 + len(query) <= MAX_GET_URL:
            raw = await exchange(http, "GET", f"{url}?{query}", max_bytes=MAX_ANSWER_BYTES)
            return _answer(raw, operation)
        log.debug("%s: URL too long for GET; sending by POST", operation.name)
    if _size(pairs) >= THREAD_THRESHOLD:
        body = await asyncio.to_thread(_encode, pairs)
    else:
        body = _encode(pairs)
    raw = await exchange(
        http,
        "POST",
        url,
        headers={"Content-Type": FORM_TYPE},
        content=body.encode("ascii"),
        max_bytes=MAX_ANSWER_BYTES,
    )
    return _answer(raw, operation)


def _answer(raw: RawResponse, operation: Operation) -> str | etree._Element:
    status = raw.status
    if status != 200:
        raise error_for(raw)
    root = parse(
        raw.body, f"The answer of {operation.name}", status=status, maybe_processed=operation.sends
    )
    if operation.result is ResultKind.TEXT:
        if local_name(root) != "string" or len(root):
            raise ProtocolError(
                f"The answer of {operation.name} is <{local_name(root)[:60]}>, not the "
                "<string> holding a text result.",
                status=status,
                maybe_processed=operation.sends,
            )
        return root.text or ""
    return root
