"""Small HTTP helpers shared by the sandbox's faces: envelopes, bounded bodies."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

JSON_TYPE = "application/json"

log = logging.getLogger("gwdesk.sandbox")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Answer = Callable[[int, str, "dict[str, str] | None"], web.Response]
"""A face's failure answer: status, message, headers."""


def any_case(path: str) -> str:
    """An aiohttp route matching `path` in any letter case, as IIS and ASP.NET route.

    The real service's documentation itself writes `/v2/Replies/GetByDate` beside
    `/v2/message/send`, and clients copy either.
    """
    return "/{path:(?i:" + re.escape(path.lstrip("/")) + ")}"


class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is larger than {limit} bytes")
        self.limit = limit


async def read_limited(request: web.Request, limit: int) -> bytes:
    """Read the body, refusing (without buffering it) anything over `limit` bytes."""
    if request.content_length is not None and request.content_length > limit:
        raise BodyTooLarge(limit)
    data = bytearray()
    async for chunk in request.content.iter_chunked(65536):
        data += chunk
        if len(data) > limit:
            raise BodyTooLarge(limit)
    return bytes(data)


def json_response(
    payload: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return web.Response(
        text=body,
        status=status,
        content_type=JSON_TYPE,
        charset="utf-8",
        headers=headers,
    )


def success(data: Any) -> web.Response:
    return json_response({"Data": data, "Status": "Success", "StatusCode": 200})


def failure(
    status: int,
    message: str,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> web.Response:
    """The contract's failure envelope; `StatusCode` repeats the HTTP status."""
    return json_response(
        {
            "Data": None,
            "Status": "Failed",
            "StatusCode": status,
            "Errors": [{"Field": field, "Message": message}],
        },
        status=status,
        headers=headers,
    )


async def answered(
    request: web.Request,
    handle: Callable[[], Awaitable[web.StreamResponse]],
    answer: Answer,
    server: str,
) -> web.StreamResponse:
    """What `handle` answers, or what aiohttp refused (no such route, a method the route does
    not take) and any unexpected error, in the face's own failure answer: never a traceback."""
    try:
        return await handle()
    except web.HTTPMethodNotAllowed as exc:
        allow = {"Allow": ",".join(sorted(exc.allowed_methods))}
        return answer(405, f"{request.method} is not allowed here.", allow)
    except web.HTTPNotFound:
        return answer(404, f"No such endpoint: {request.path[:80]}.", None)
    except web.HTTPException as exc:
        if exc.status >= 400:
            return answer(exc.status, exc.reason, None)
        raise
    except ConnectionError:
        raise  # the client went away mid-request: nothing to answer, nothing to log
    except Exception:
        log.exception("unexpected error in %s", request.path)
        return answer(500, f"The {server} could not process the request.", None)
