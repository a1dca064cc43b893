"""When to try again, and how long to wait first.

Two rules, kept apart on purpose:

* an idempotent call (status, logs, balance, backfill, token) may be repeated after
  any failure that can pass: server trouble, connection trouble, time-outs, 429s
  and unreadable answers;
* a send may be repeated only when it surely did not reach the gateway: the
  connection was never made, or the gateway answered 429 or 503. Anything else
  that may have lodged it is settled by a status query (see `sending.py`).

Waits are exponential back-off with full jitter (a random wait between zero and
the exponential cap), so many clients failing together do not return together. A
`Retry-After` is honoured when it is within `max_retry_after`; a longer one is
reported to the caller instead of blocking it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypeVar

from gwdesk.gateway.errors import (
    GatewayError,
    ProtocolError,
    RateLimitedError,
    TransientError,
)

T = TypeVar("T")
#: Answers after which a request surely was not acted on: the gateway said so first.
NOT_PROCESSED_STATUSES: Final = frozenset({429, 503})
Sleep = Callable[[float], Awaitable[None]]
log = logging.getLogger("gwdesk.gateway.retry")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Limits of retrying; the defaults suit an operator waiting at a console."""

    attempts: int = 4
    """Tries of one idempotent call, the first included."""
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 30.0
    send_attempts: int = 4
    """Tries of one send, counting resends after a status query proved it was not lodged."""
    resolve_window: float = 5.0
    """How long status queries look for a send whose answer was lost before it counts as
    not lodged; a batch's messages appear in the background, so the first look can miss."""
    resolve_first_delay: float = 0.05
    resolve_max_delay: float = 1.0


def retryable_idempotent(error: GatewayError) -> bool:
    return isinstance(error, TransientError | RateLimitedError | ProtocolError)


def retryable_send(error: GatewayError) -> bool:
    """A send failure that proves the gateway did not act on the request."""
    if error.maybe_processed:
        return False
    if isinstance(error, ProtocolError):
        return error.status in NOT_PROCESSED_STATUSES
    return isinstance(error, TransientError | RateLimitedError)


class Retrier:
    """Applies a `RetryPolicy`; the random source and the sleep are injectable for tests."""

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        rng: random.Random | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.policy = policy or RetryPolicy()
        self.rng = rng or random.Random()
        self.sleep = sleep

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max_delay, base * 2**(attempt-1))]."""
        cap = min(self.policy.max_delay, self.policy.base_delay * (2 ** max(0, attempt - 1)))
        return self.rng.uniform(0, cap)

    def delay_for(self, error: GatewayError, attempt: int) -> float | None:
        """Seconds to wait before try `attempt + 1`, or None when the error must be raised."""
        asked = error.retry_after if isinstance(error, RateLimitedError | TransientError) else None
        if asked is not None:
            if asked > self.policy.max_retry_after:
                return None
            # A little jitter on top, so clients told the same moment do not collide.
            return asked + self.rng.uniform(0, self.policy.base_delay)
        return self.backoff(attempt)

    async def idempotent(self, call: Callable[[], Awaitable[T]], what: str) -> T:
        """Run `call`, repeating it after passing failures within the policy's limits."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return await call()
            except GatewayError as exc:
                if not retryable_idempotent(exc) or attempt >= self.policy.attempts:
                    raise
                wait = self.delay_for(exc, attempt)
                if wait is None:
                    raise
                log.info("%s failed (%s); try %d in %.2f s", what, exc.message, attempt + 1, wait)
                await self.sleep(wait)
