"""The token cache: refreshed before expiry, fetched once however many callers wait."""

from __future__ import annotations

import asyncio

import pytest

from gwdesk.domain.models import Secret, Token
from gwdesk.gateway.auth import Credentials, TokenCache
from gwdesk.gateway.errors import TransientError


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Issuer:
    """Issues numbered tokens; `delay` lets concurrent callers pile up behind one fetch."""

    def __init__(self, lifetime: int, delay: float = 0.0) -> None:
        self.lifetime = lifetime
        self.delay = delay
        self.issued = 0

    async def __call__(self) -> Token:
        self.issued += 1
        await asyncio.sleep(self.delay)
        return Token.model_validate(
            {"access_token": f"t{self.issued}", "expires_in": self.lifetime}
        )


async def test_a_hundred_waiting_callers_share_one_fetch() -> None:
    issuer = Issuer(3599, delay=0.05)
    cache = TokenCache(issuer)
    tokens = await asyncio.gather(*(cache.get() for _ in range(100)))
    assert issuer.issued == 1
    assert {t.reveal() for t in tokens} == {"t1"}


async def test_a_token_is_replaced_a_margin_before_it_expires() -> None:
    clock, issuer = Clock(), Issuer(3599)
    cache = TokenCache(issuer, clock=clock)
    await cache.get()
    clock.now += 3599 - 61  # the margin is 60 s for a long-lived token
    assert (await cache.get()).reveal() == "t1"
    clock.now += 2
    assert (await cache.get()).reveal() == "t2"


def test_the_margin_scales_with_short_lifetimes() -> None:
    assert TokenCache.margin(2) == 0.2
    assert TokenCache.margin(3599) == 60
    assert TokenCache.margin(0) == 0


async def test_a_refused_token_is_forgotten_once_even_by_many_callers() -> None:
    issuer = Issuer(3599)
    cache = TokenCache(issuer)
    stale = await cache.get()
    for _ in range(5):
        cache.invalidate(stale)  # five calls saw the same 401
    fresh = await cache.get()
    cache.invalidate(stale)  # a late 401 for the old token leaves the new one alone
    assert (await cache.get()) is fresh
    assert issuer.issued == 2


async def test_a_token_without_lifetime_serves_only_the_call_that_fetched_it() -> None:
    issuer = Issuer(0)
    cache = TokenCache(issuer)
    await cache.get()
    await cache.get()
    assert issuer.issued == 2


def test_credentials_show_no_password() -> None:
    credentials = Credentials("ops", Secret("pa55word"))
    assert "pa55word" not in repr(credentials) + str(credentials)
    assert credentials.basic_header() == "Basic b3BzOnBhNTV3b3Jk"


async def test_a_token_that_expired_before_it_arrived_is_a_transient_error_not_a_login_refusal() -> (
    None
):
    clock = Clock()

    async def slow_issuer() -> Token:
        clock.now += 2.5  # the answer took longer than the token lives
        return Token.model_validate({"access_token": "t1", "expires_in": 2})

    cache = TokenCache(slow_issuer, clock=clock)
    with pytest.raises(TransientError, match="expired by the time it arrived") as caught:
        await cache.get()
    assert not caught.value.maybe_processed  # nothing was sent: safe to try again
