"""The REST `/v2/` client: every endpoint, authentication, and retries of safe calls.

Sends are offered here as single attempts (`send_once`, `simple_send_once`): whether
one may be repeated depends on what happened to it, which `sending.py` decides.
Everything else is idempotent and retried by the `Retrier`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any, Final, TypedDict, Unpack

import httpx

from gwdesk.domain.models import (
    SUCCESS,
    AccountInfo,
    Balance,
    BalanceEnvelope,
    LogListing,
    Message,
    RepliesPage,
    SendEnvelope,
    StatusList,
    Token,
    TokenErrorBody,
)
from gwdesk.domain.models.secret import Secret
from gwdesk.domain.wire_time import iso
from gwdesk.gateway.auth import Credentials, TokenCache
from gwdesk.gateway.errors import AuthenticationError, GatewayError, ValidationError
from gwdesk.gateway.http import MAX_RESPONSE_BYTES, RawResponse, exchange
from gwdesk.gateway.responses import error_for, read_json, to_model
from gwdesk.gateway.retry import Retrier

log = logging.getLogger("gwdesk.gateway.rest")
FORM: Final = "application/x-www-form-urlencoded"
JSON_HEADERS: Final = {"Accept": "application/json"}
TOKEN_PATH: Final = "/v2/oauth/access_token"  # noqa: S105 - a path
BALANCE_PATH: Final = "/v2/account/balance"
ACCOUNT_INFO_PATH: Final = "/v2/Account/Info"
STATUS_KEYS: Final = ("message_id", "batch_code", "external_system_id")


class StatusKey(TypedDict, total=False):
    """What a status query is by: exactly one of `STATUS_KEYS`."""

    message_id: str | None
    batch_code: str | None
    external_system_id: str | None


LOG_KEYS: Final = ("page", "since", "message_id", "batch_code", "recipient")


def only_one(
    values: Mapping[str, object], keys: tuple[str, ...], *, required: bool
) -> tuple[str, str] | None:
    """The one query parameter the gateway allows, or a `ValidationError` naming the choice."""
    given = {k: v for k, v in values.items() if v is not None and v != ""}
    if len(given) > 1:
        raise ValidationError(
            f"Give only one of {', '.join(given)}: the gateway takes one parameter per query.",
            status=None,
        )
    if not given:
        if required:
            raise ValidationError(f"Give one of {', '.join(keys)}.", status=None)
        return None
    name, value = next(iter(given.items()))
    return (name, str(value))


class RestClient:
    """One profile's REST interface over a shared pooled `httpx.AsyncClient`."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        credentials: Credentials,
        *,
        retrier: Retrier,
        zone: tzinfo,
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.client = client
        self.credentials = credentials
        self.retrier = retrier
        self.zone = zone
        self.max_bytes = max_bytes
        self.tokens = TokenCache(self._fetch_token)

    def __repr__(self) -> str:
        return f"RestClient(base_url={str(self.client.base_url)!r}, username={self.credentials.username!r})"

    @property
    def context(self) -> dict[str, Any]:
        return {"zone": self.zone}

    # ---- authentication ----------------------------------------------------------------------

    async def _fetch_token(self) -> Token:
        return await self.retrier.idempotent(self._token_once, "token request")

    async def _token_once(self) -> Token:
        raw = await exchange(
            self.client,
            "POST",
            TOKEN_PATH,
            headers={**JSON_HEADERS, "Content-Type": FORM},
            data={
                "grant_type": "password",
                "username": self.credentials.username,
                "password": self.credentials.password.reveal(),
            },
            max_bytes=self.max_bytes,
        )
        if raw.status == 400:
            payload = read_json(raw)
            detail = to_model(raw, TokenErrorBody, payload)
            if detail.error == "invalid_grant":
                raise AuthenticationError(
                    "The gateway refused the user name or password.", status=400
                )
            raise AuthenticationError(
                f"The gateway refused the token request: {detail.error_description or detail.error}",
                status=400,
            )
        if raw.status != 200:
            raise error_for(raw)
        return to_model(raw, Token, read_json(raw))

    async def _auth_header(self, mode: str) -> tuple[str, Secret | None]:
        if mode == "basic":
            return (self.credentials.basic_header(), None)
        token = await self.tokens.get()
        return (f"Bearer {token.reveal()}", token)

    async def authorised(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        basic_fallback: bool = False,
    ) -> RawResponse:
        """One exchange with credentials; after a 401, once more with a fresh token.

        A 401 means the request was refused before any work, so repeating it is safe
        even for a send. `basic_fallback` then tries Basic credentials as a last resort
        (the balance endpoint is documented with Basic only).
        """
        mode = self.credentials.mode

        async def attempt(with_mode: str) -> tuple[RawResponse, Secret | None]:
            header, token = await self._auth_header(with_mode)
            raw = await exchange(
                self.client,
                method,
                path,
                headers={**JSON_HEADERS, **(headers or {}), "Authorization": header},
                params=params,
                json=json,
                data=data,
                content=content,
                max_bytes=self.max_bytes,
            )
            return (raw, token)

        raw, token = await attempt(mode)
        if raw.status == 401 and token is not None:
            log.info("%s %s: token refused; fetching a fresh one", method, path)
            self.tokens.invalidate(token)
            raw, token = await attempt(mode)
            if raw.status == 401 and basic_fallback:
                raw, _ = await attempt("basic")
        return raw

    # ---- sends (single attempts) -------------------------------------------------------------

    def _envelope(self, raw: RawResponse) -> SendEnvelope:
        if raw.status != 200:
            raise error_for(raw)
        envelope = to_model(raw, SendEnvelope, read_json(raw), self.context)
        if envelope.status != SUCCESS or (envelope.status_code and envelope.status_code >= 400):
            raise error_for(RawResponse(envelope.status_code or 500, raw.headers, raw.body))
        return envelope

    async def send_once(self, body: Mapping[str, Any]) -> SendEnvelope:
        raw = await self.authorised("POST", "/v2/message/send", json=dict(body))
        return self._envelope(raw)

    async def simple_send_once(self, body: Mapping[str, Any]) -> SendEnvelope:
        raw = await self.authorised("POST", "/v2/message/simple_send", json=dict(body))
        return self._envelope(raw)

    # ---- idempotent calls --------------------------------------------------------------------

    async def _get_json(self, path: str, params: Mapping[str, str]) -> tuple[RawResponse, Any]:
        raw = await self.authorised("GET", path, params=params)
        if raw.status != 200:
            raise error_for(raw)
        return (raw, read_json(raw))

    async def status_once(self, **key: Unpack[StatusKey]) -> list[Message]:
        choice = only_one(key, STATUS_KEYS, required=True)
        assert choice is not None
        raw, payload = await self._get_json("/v2/message/status", dict([choice]))
        return list(to_model(raw, StatusList, payload, self.context).root)

    async def status(self, **key: Unpack[StatusKey]) -> list[Message]:
        """Messages of one message, batch or ExternalSystemId (exactly one of them)."""
        return await self.retrier.idempotent(lambda: self.status_once(**key), "status query")

    async def logs(
        self,
        *,
        page: int | None = None,
        since: datetime | None = None,
        message_id: str | None = None,
        batch_code: str | None = None,
        recipient: str | None = None,
    ) -> LogListing:
        """One page of the account's log (at most one filter; none is page 1)."""
        if page is not None and page < 1:
            raise ValidationError("page counts from 1.", field="page", status=None)
        choice = only_one(
            {
                "page": page,
                "since": iso(since, "since") if since is not None else None,
                "message_id": message_id,
                "batch_code": batch_code,
                "recipient": recipient,
            },
            LOG_KEYS,
            required=False,
        )
        params = dict([choice]) if choice else {}

        async def once() -> LogListing:
            raw, payload = await self._get_json("/v2/message/logs", params)
            return to_model(raw, LogListing, payload, self.context)

        return await self.retrier.idempotent(once, "log listing")

    async def balance(self) -> Balance:
        """The account balance: a form-encoded POST, as the spec shows it.

        The contract wraps it in the envelope; the real service's account resources
        answer bare objects, so a bare `{"Balance": ...}` is read too.
        """

        async def once() -> Balance:
            raw = await self.authorised(
                "POST",
                BALANCE_PATH,
                content=b"",
                headers={"Content-Type": FORM},
                basic_fallback=True,
            )
            if raw.status != 200:
                raise error_for(raw)
            payload = read_json(raw)
            if isinstance(payload, dict) and "Data" not in payload and "Balance" in payload:
                return to_model(raw, Balance, payload, self.context)
            return to_model(raw, BalanceEnvelope, payload, self.context).data

        return await self.retrier.idempotent(once, "balance query")

    async def account_info(self) -> AccountInfo:
        """`GET /v2/Account/Info`, the real service's account resource (a bare object)."""

        async def once() -> AccountInfo:
            raw, payload = await self._get_json(ACCOUNT_INFO_PATH, {})
            return to_model(raw, AccountInfo, payload, self.context)

        return await self.retrier.idempotent(once, "account query")

    async def replies_page(
        self, start: datetime, end: datetime | None, page: int, page_size: int
    ) -> RepliesPage:
        params = {
            "startDate": iso(start, "startDate"),
            "Page": str(page),
            "PageSize": str(page_size),
        }
        if end is not None:
            params["endDate"] = iso(end, "endDate")

        async def once() -> RepliesPage:
            raw, payload = await self._get_json("/v2/Replies/GetByDate", params)
            return to_model(raw, RepliesPage, payload, self.context)

        return await self.retrier.idempotent(once, "reply backfill")


def is_fatal(error: GatewayError) -> bool:
    """Failures that will fail every further request of the same kind too."""
    return isinstance(error, AuthenticationError)
