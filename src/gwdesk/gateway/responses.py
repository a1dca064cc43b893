"""Reading the gateway's answers: JSON into models, HTTP statuses into operator errors.

The real service may answer with shapes the contract does not show (a proxy's HTML
page, a truncated body, an envelope with extra fields), so every path here ends in
either a model or a `GatewayError` with a plain-language message, never a
`KeyError` or a pydantic traceback.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Final, TypeVar

import pydantic

from gwdesk.domain.models import FailureEnvelope, TokenErrorBody
from gwdesk.gateway.errors import (
    AuthenticationError,
    GatewayError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    TransientError,
    ValidationError,
)
from gwdesk.gateway.http import RawResponse
from gwdesk.gateway.retry import NOT_PROCESSED_STATUSES

M = TypeVar("M", bound=pydantic.BaseModel)
MAX_MESSAGE: Final = 300


def _looks_like_html(raw: RawResponse) -> bool:
    head = raw.body[:200].lstrip().lower()
    return "html" in raw.content_type or head.startswith((b"<!doctype", b"<html", b"<"))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def read_json(raw: RawResponse) -> Any:
    """The answer's JSON value, or a `ProtocolError` saying what came instead."""
    if not raw.body.strip():
        raise ProtocolError(
            f"The gateway sent an empty answer (HTTP {raw.status}).",
            status=raw.status,
            maybe_processed=True,
        )
    if _looks_like_html(raw):
        raise ProtocolError(
            f"The gateway answered with a web page (HTTP {raw.status}), not data: "
            "probably a proxy or server error page.",
            status=raw.status,
            maybe_processed=True,
        )
    try:
        return json.loads(raw.body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProtocolError(
            f"The gateway's answer (HTTP {raw.status}) is not valid JSON; it may have been cut off.",
            status=raw.status,
            maybe_processed=True,
        ) from None


def to_model(
    raw: RawResponse, model: type[M], payload: Any, context: dict[str, Any] | None = None
) -> M:
    try:
        return model.model_validate(payload, context=context)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        raise ProtocolError(
            f"The gateway's answer (HTTP {raw.status}) has an unexpected shape "
            f"({where}: {first['msg']}).",
            status=raw.status,
            maybe_processed=True,
        ) from None


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a `Retry-After` header (delta-seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(min(int(text[:9]), 86_400))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _failure_text(raw: RawResponse) -> tuple[str | None, str | None]:
    """The envelope's first message and field, when the body is one."""
    try:
        payload = json.loads(raw.body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return (None, None)
    if not isinstance(payload, dict):
        return (None, None)
    if "error" in payload and "Errors" not in payload:
        try:
            token_error = TokenErrorBody.model_validate(payload)
        except pydantic.ValidationError:
            return (None, None)
        return (token_error.error_description or token_error.error, None)
    try:
        envelope = FailureEnvelope.model_validate(payload)
    except pydantic.ValidationError:
        return (None, None)
    messages = [e.message.strip() for e in envelope.errors if e.message and e.message.strip()]
    field = next((e.field for e in envelope.errors if e.field), None)
    if not messages:
        return (None, field)
    return (_clip(" ".join(messages)), field)


def error_for(raw: RawResponse) -> GatewayError:
    """The operator-facing error for a non-2xx answer."""
    status = raw.status
    text, field = _failure_text(raw)
    page = (
        " (the answer was a web page, not data)" if text is None and _looks_like_html(raw) else ""
    )
    if page and (status >= 500 or status == 429):
        # A proxy's or server's error page: whether the work was done depends on the status.
        return ProtocolError(
            f"The gateway answered with a web page (HTTP {status}), not data: "
            "probably a proxy or server error page.",
            status=status,
            maybe_processed=status not in NOT_PROCESSED_STATUSES,
        )
    if status in (400, 422):
        return ValidationError(
            text or f"The gateway refused the request as invalid (HTTP {status}){page}.",
            field=field,
            status=status,
        )
    if status == 401:
        return AuthenticationError(
            f"The gateway did not accept the credentials: {text or 'not authorised'}",
            status=status,
        )
    if status == 403:
        return AuthenticationError(
            f"The account may not do this: {text or 'forbidden'}", status=status
        )
    if status == 404:
        return NotFoundError(text or "The gateway has no such item or endpoint.", status=status)
    if status == 413:
        return ValidationError(
            f"The request is too large for the gateway: {text or 'body too large'}",
            field=field,
            status=status,
        )
    if status == 429:
        wait = retry_after(raw.headers.get("retry-after"))
        hint = f" Try again in {wait:g} s." if wait is not None else ""
        return RateLimitedError(
            f"The gateway is limiting requests.{hint}", retry_after=wait, status=status
        )
    if status >= 500:
        reason = text or f"server trouble (HTTP {status}){page}"
        return TransientError(
            f"The gateway could not handle the request: {reason}",
            status=status,
            maybe_processed=status not in NOT_PROCESSED_STATUSES,
            retry_after=retry_after(raw.headers.get("retry-after")),
        )
    if status in (405, 406, 415):
        return ProtocolError(
            f"The gateway did not accept the request's form (HTTP {status}): {text or 'refused'}",
            status=status,
        )
    return GatewayError(
        f"The gateway refused the request (HTTP {status}){': ' + text if text else page}.",
        status=status,
    )
