"""Credentials and the OAuth token cache.

A token is fetched once and shared by every concurrent call (single flight: a
hundred calls arriving together cause one token request), and replaced shortly
before it expires, with a margin relative to its lifetime so that a short-lived
token is not refreshed on every call and a long one not used to its last second.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from gwdesk.domain.models import Secret, Token
from gwdesk.domain.profile import AuthMode
from gwdesk.gateway.errors import TransientError

MARGIN_RATIO: Final = 0.1
MAX_MARGIN: Final = 60.0
#: A token is refreshed at least this often whatever lifetime the gateway claims (seconds);
#: also keeps an absurd `expires_in` from overflowing the float clock arithmetic.
MAX_LIFETIME: Final = 86_400


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: Secret
    mode: AuthMode = "oauth"

    def basic_header(self) -> str:
        raw = f"{self.username}:{self.password.reveal()}".encode()
        return f"Basic {base64.b64encode(raw).decode('ascii')}"

    def __repr__(self) -> str:
        return f"Credentials(username={self.username!r}, password={self.password!r}, mode={self.mode!r})"


@dataclass(frozen=True, slots=True)
class _Held:
    token: Secret
    refresh_at: float


class TokenCache:
    """The current access token, refreshed before expiry, fetched by one caller at a time."""

    def __init__(
        self,
        fetch: Callable[[], Awaitable[Token]],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._held: _Held | None = None
        self._lock = asyncio.Lock()
        self.fetches = 0
        """Token requests made so far (a health figure, and what tests count)."""
        self.expires_at: float | None = None
        """Wall-clock time (epoch seconds) the current token expires, for the status bar."""

    @staticmethod
    def margin(expires_in: float) -> float:
        return min(MAX_MARGIN, max(0.0, expires_in) * MARGIN_RATIO)

    def _valid(self) -> Secret | None:
        held = self._held
        if held is not None and self._clock() < held.refresh_at:
            return held.token
        return None

    async def get(self) -> Secret:
        token = self._valid()
        if token is not None:
            return token
        async with self._lock:
            token = self._valid()
            if token is not None:
                return token
            # Timed from before the request, so the gateway's clock cannot be ahead of ours.
            started = self._clock()
            self.fetches += 1
            fresh = await self._fetch()
            lifetime = float(min(fresh.expires_in, MAX_LIFETIME))
            took = self._clock() - started
            if 0 < lifetime <= took:  # (no lifetime: it serves this one call)
                # Dead on arrival: using it would get a 401 that reads as refused
                # credentials. Nothing was sent yet, so a retry is safe.
                raise TransientError(
                    f"The gateway's access token had expired by the time it arrived: it "
                    f"lasts {lifetime:g} s and the token request took {took:.1f} s. The "
                    "connection to the gateway is too slow, or the gateway stalled."
                )
            self._held = _Held(fresh.access_token, started + lifetime - self.margin(lifetime))
            self.expires_at = time.time() + lifetime - (self._clock() - started)
            return fresh.access_token

    def invalidate(self, token: Secret) -> None:
        """Forget `token` after the gateway refused it, unless a newer one replaced it already."""
        held = self._held
        if held is not None and held.token is token:
            self._held = None
            self.expires_at = None

    def clear(self) -> None:
        self._held = None
        self.expires_at = None
