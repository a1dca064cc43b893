"""Small HTTP helpers shared by the sandbox's faces: envelopes, bounded bodies."""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

JSON_TYPE = "application/json"


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
