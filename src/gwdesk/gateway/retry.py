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

Every loop of tries in gwdesk is `Retrier.run`: the idempotent calls here, the Lodge
client's sends, and the outbox's (a REST send repeated only once a status query proved
it not lodged, and the status looks that settle a lost answer within a window, a
`Deadline`). The callers say what may be tried again; the loop's shape (how many
tries, how long between them, Retry-After, the deadline) is written once, here.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, TypedDict, TypeVar

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
Clock = Callable[[], float]
Waits = Callable[[int], float]
"""Seconds to wait before the try after try `n` (counted from 1)."""
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


@dataclass(frozen=True, slots=True)
class Deadline:
    """A moment by a clock after which a loop of tries starts no other."""

    at: float
    clock: Clock = time.monotonic

    @classmethod
    def after(cls, seconds: float, clock: Clock = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    def left(self) -> float:
        """Seconds until the deadline (zero or less once it has passed)."""
        return self.at - self.clock()


def doubling(first: float, cap: float) -> Waits:
    """Waits that double from `first` up to `cap`, without jitter: for looking again for
    something being made (a batch's messages appear in the background), not for
    backing off a server in trouble."""

    def wait(attempt: int) -> float:
        return min(cap, first * 2.0 ** max(0, attempt - 1))

    return wait


def never(_error: GatewayError) -> bool:
    return False


def retryable_idempotent(error: GatewayError) -> bool:
    return isinstance(error, TransientError | RateLimitedError | ProtocolError)


def retryable_send(error: GatewayError) -> bool:
    """A send failure that proves the gateway did not act on the request."""
    if error.maybe_processed:
        return False
    if isinstance(error, ProtocolError):
        return error.status in NOT_PROCESSED_STATUSES
    return isinstance(error, TransientError | RateLimitedError)


class RetryOptions(TypedDict, total=False):
    """How `Retrier.run` tries again, for a caller that passes them on (its defaults hold
    where one is left out)."""

    retryable: Callable[[GatewayError], bool]
    attempts: int | None
    deadline: Deadline | None
    waits: Waits | None
    at_once: Callable[[GatewayError], bool]
    outlives_deadline: Callable[[GatewayError], bool]


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

    def delay_for(
        self, error: GatewayError, attempt: int, waits: Waits | None = None
    ) -> float | None:
        """Seconds to wait before try `attempt + 1`, or None when the error must be raised:
        the wait the gateway asked for, else `waits` (by default the policy's back-off)."""
        asked = asked_wait(error)
        if asked is not None:
            if asked > self.policy.max_retry_after:
                return None
            # A little jitter on top, so clients told the same moment do not collide.
            return asked + self.rng.uniform(0, self.policy.base_delay)
        return (waits or self.backoff)(attempt)

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        what: str,
        retryable: Callable[[GatewayError], bool] = retryable_idempotent,
        attempts: int | None = None,
        deadline: Deadline | None = None,
        waits: Waits | None = None,
        at_once: Callable[[GatewayError], bool] = never,
        outlives_deadline: Callable[[GatewayError], bool] = never,
    ) -> T:
        """`call`'s answer, after trying it again on each failure `retryable` allows.

        The last failure is raised once `call` fails in a way `retryable` does not allow,
        after `attempts` tries (None: no limit but the deadline), or once the `deadline`
        has passed (a failure `outlives_deadline` names is tried again past it: a look
        that got no answer when the window needs one). Before each further try the loop
        waits (`delay_for`): the gateway's Retry-After (longer than the policy allows, or
        past the deadline: no further try), else `waits`, cut to the deadline; not at
        all after a failure `at_once` names (the caller proved that try had no effect).
        """
        if attempts is None and deadline is None:
            raise ValueError("A loop of tries needs a limit: attempts, a deadline or both.")
        attempt = 0
        while True:
            attempt += 1
            try:
                return await call()
            except GatewayError as exc:
                again_now = at_once(exc)
                tried_out = attempts is not None and attempt >= attempts
                if not (again_now or retryable(exc)) or tried_out:
                    raise
                left = deadline.left() if deadline is not None else None
                if left is not None and left <= 0 and not outlives_deadline(exc):
                    raise
                if again_now:
                    continue
                wait = self.delay_for(exc, attempt, waits)
                if wait is None:
                    raise
                if left is not None and left > 0:
                    if asked_wait(exc) is not None and wait > left:
                        raise  # the gateway would refuse a try before the deadline again
                    wait = min(wait, left)
                log.info("%s: %s; try %d in %.2f s", what, exc.message, attempt + 1, wait)
                await self.sleep(wait)

    async def idempotent(self, call: Callable[[], Awaitable[T]], what: str) -> T:
        """Run `call`, repeating it after passing failures within the policy's limits."""
        return await self.run(call, what=what, attempts=self.policy.attempts)

    async def send(self, call: Callable[[], Awaitable[T]], what: str) -> T:
        """Run a send, repeating it only after failures that prove it was not acted on."""
        return await self.run(
            call, what=what, retryable=retryable_send, attempts=self.policy.send_attempts
        )


def asked_wait(error: GatewayError) -> float | None:
    """The seconds the gateway asked to wait before another try, when it said."""
    return error.retry_after if isinstance(error, RateLimitedError | TransientError) else None
