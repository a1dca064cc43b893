"""`GatewayService`: one profile's gateway, as the console, batch sending and the CLI use it.

One facade per profile owns one pooled `httpx.AsyncClient`, the token cache and
the retry policy; the REST client and (when the profile has a Lodge URL) the Lodge
client (`lodge`, see `gwdesk.gateway.lodge.client`) share that client. It is async and
Qt-free: the console drives it from its qasync loop, the CLI from `asyncio.run`. It
sends nothing itself: every send leaves through the outbox (`gwdesk.app.outbox`),
whose runner makes each request through `send_once` or on `lodge`.

It is the only door to the gateway for the layers above: they call its methods (the
single attempts the outbox settles itself, the profile's retry loop `retry`, the
token's expiry) and never reach past it to the REST client or the retrier. What they
need to use `retry` (the deadline, the waits, which failures may be tried again) is
named here too.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, Final, TypeVar, Unpack

import httpx

from gwdesk.domain.funds import Funds
from gwdesk.domain.models import Balance, LogListing, Message, Reply, Secret, SendEnvelope
from gwdesk.domain.numbers import NumberError, normalise
from gwdesk.domain.profile import Profile
from gwdesk.gateway.auth import Credentials
from gwdesk.gateway.errors import GatewayError, NotFoundError, ValidationError
from gwdesk.gateway.health import Answering, GatewayHealth
from gwdesk.gateway.http import HttpSettings, build_client
from gwdesk.gateway.lodge.client import LodgeClient
from gwdesk.gateway.paging import LogSync, iter_replies
from gwdesk.gateway.responses import error_for
from gwdesk.gateway.rest import RestClient, StatusKey
from gwdesk.gateway.retry import (
    Deadline,
    Retrier,
    RetryOptions,
    RetryPolicy,
    Sleep,
    doubling,
    retryable_idempotent,
    retryable_send,
)

__all__ = [
    "ABSENT_STATUSES",
    "Answering",
    "Deadline",
    "GatewayHealth",
    "GatewayService",
    "HttpSettings",
    "LodgeClient",
    "RetryPolicy",
    "doubling",
    "retryable_idempotent",
    "retryable_send",
]

T = TypeVar("T")
LodgeFactory = Callable[[Profile, Credentials, httpx.AsyncClient], LodgeClient]
#: Statuses that say a gateway does not have an endpoint at all.
ABSENT_STATUSES: Final = (404, 405)


class GatewayService:
    """The gateway of one profile. Use `async with`, or call `aclose()` when done."""

    def __init__(
        self,
        profile: Profile,
        password: Secret,
        *,
        http: HttpSettings | None = None,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        lodge_factory: LodgeFactory | None = None,
        rng: random.Random | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        self.profile = profile
        self.http_settings = http or HttpSettings()
        self.credentials = Credentials(profile.username, password, profile.auth)
        self.health = GatewayHealth()
        """Whether the gateway answers, watched on every request of `http`."""
        self.http = build_client(
            profile.rest_url,
            self.http_settings,
            ca_bundle=profile.ca_bundle,
            transport=transport,
            health=self.health,
        )
        retrier = Retrier(retry, rng=rng) if sleep is None else Retrier(retry, rng=rng, sleep=sleep)
        self.retrier = retrier
        self.rest = RestClient(
            self.http,
            self.credentials,
            retrier=retrier,
            zone=profile.zone,
            max_bytes=self.http_settings.max_response_bytes,
        )
        self._lodge: LodgeClient | None = None
        if profile.lodge_url:
            # Lazy: nothing is fetched (not even the WSDL) until the first Lodge call.
            if lodge_factory is not None:
                self._lodge = lodge_factory(profile, self.credentials, self.http)
            else:
                self._lodge = LodgeClient(profile, self.credentials, self.http, retrier=retrier)

    def __repr__(self) -> str:
        return f"GatewayService(profile={self.profile.name!r}, rest_url={self.profile.rest_url!r})"

    async def __aenter__(self) -> GatewayService:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._lodge is not None:
            await self._lodge.aclose()
        await self.http.aclose()
        self.health.close()

    @property
    def lodge(self) -> LodgeClient:
        """The Lodge client; a clear error when this profile cannot reach Lodge."""
        if self._lodge is None:
            raise GatewayError(
                f"Profile {self.profile.name!r} has no Lodge client: set its Lodge URL."
            )
        return self._lodge

    @property
    def token_requests(self) -> int:
        return self.rest.tokens.fetches

    @property
    def token_expires_at(self) -> float | None:
        """When the OAuth token held now expires (epoch seconds; None: none held)."""
        return self.rest.tokens.expires_at

    @property
    def retry_policy(self) -> RetryPolicy:
        return self.retrier.policy

    async def retry(
        self, call: Callable[[], Awaitable[T]], *, what: str, **options: Unpack[RetryOptions]
    ) -> T:
        """`call` tried again within this profile's retry policy (`Retrier.run`, which
        holds the options' defaults): its back-off, Retry-After and sleep, for loops the
        callers own the meaning of."""
        return await self.retrier.run(call, what=what, **options)

    # ---- single attempts (the outbox settles what they leave open) ----------------------

    async def send_once(self, body: Mapping[str, Any]) -> SendEnvelope:
        """One `/v2/message/send` request, never repeated here: only the outbox knows
        whether a failed one may be sent again."""
        return await self.rest.send_once(body)

    async def status_once(self, **key: Unpack[StatusKey]) -> list[Message]:
        """One status query, not repeated: for a caller that counts its own failures."""
        return await self.rest.status_once(**key)

    # ---- queries -------------------------------------------------------------------------

    async def status(self, **key: Unpack[StatusKey]) -> list[Message]:
        """Messages of one message, batch or ExternalSystemId (exactly one of them)."""
        return await self.rest.status(**key)

    async def logs(
        self,
        *,
        page: int | None = None,
        since: datetime | None = None,
        message_id: str | None = None,
        batch_code: str | None = None,
        recipient: str | None = None,
    ) -> LogListing:
        if recipient is not None:
            try:
                recipient = normalise(recipient, self.profile.region)
            except NumberError as exc:
                raise ValidationError(str(exc), field="recipient", status=None) from None
        return await self.rest.logs(
            page=page,
            since=since,
            message_id=message_id,
            batch_code=batch_code,
            recipient=recipient,
        )

    def sync_logs(self, since: datetime | None = None, known: Iterable[str] = ()) -> LogSync:
        """Every record lodged at or after `since` (the whole account without it).

        `known` are MessageIds already held whose `dateLodged` is `since`: they are skipped.
        """
        return LogSync(self.rest, since, known)

    async def log_page(self, number: int) -> bytes:
        """Page `number` of the account's log as the gateway sent it (retried), for a
        reader that parses a page its own faster way (the log sync's first pass)."""

        async def once() -> bytes:
            raw = await self.rest.authorised(
                "GET", "/v2/message/logs", params={"page": str(number)}
            )
            if raw.status != 200:
                raise error_for(raw)
            return raw.body

        return await self.retrier.idempotent(once, "log page")

    async def balance(self) -> Balance:
        return await self.rest.balance()

    async def funds(self) -> Funds:
        """What the account has to send with, from whichever account resource answers.

        `GET /v2/Account/Info` first: the real service documents it, with its fields,
        and answers it to Bearer and Basic alike, whereas the spec shows the balance
        endpoint only as a Basic-auth POST and leaves its answer unstated (the
        contract's envelope is this project's guess). A gateway without Account/Info
        (404, or 405 for a path it routes otherwise) is asked for the balance instead.
        """
        try:
            return Funds(await self.rest.account_info())
        except GatewayError as exc:
            if exc.status not in ABSENT_STATUSES:
                raise
            missing = exc.status
        note = f"This gateway has no GET /v2/Account/Info (HTTP {missing})."
        try:
            return Funds(await self.rest.balance(), note=note)
        except GatewayError as exc:
            if exc.status not in ABSENT_STATUSES:
                raise
            raise NotFoundError(
                "The gateway answers neither GET /v2/Account/Info nor POST "
                f"/v2/account/balance (HTTP {missing} and {exc.status}), so there is no "
                "balance or credit to show.",
                status=exc.status,
            ) from None

    def replies(
        self, start: datetime, end: datetime | None = None, *, page_size: int = 100
    ) -> AsyncIterator[Reply]:
        """Replies received in [start, end), all pages: what a missed webhook left behind."""
        return iter_replies(self.rest, start, end, page_size)
