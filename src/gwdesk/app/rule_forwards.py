"""Delivering the replies keyword rules forward: signed JSON, retried until taken.

A forward is queued with its rule's run (`RuleRuns.claim`), so it exists exactly when
the reply was acted on. `RuleForwarder` leases one due forward at a time (no other
runner attempts it meanwhile) and POSTs its body with

- `X-Gwdesk-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed by
  the rule's signing secret from this machine's keyring (never in the rule or the
  store: the endpoint's owner was told it once when the rule was made);
- `X-Gwdesk-Delivery: <forward id>`, the same on every attempt, so an endpoint that
  answered too late to be heard can recognise a repeat.

A 2xx answer delivers it. Anything else (a refusal, a timeout, no connection) is tried
again after a back-off that doubles from `FIRST_RETRY` up to `LONGEST_RETRY`, up to
`ATTEMPTS` tries; then it stays failed with its last error, shown by `gwdesk rules
forwards` and the rules editor. With no secret on this machine, it fails at once, saying
so (a forward is never sent unsigned).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import httpx

from gwdesk.store.database import StoreError
from gwdesk.store.rule_runs import Forward, RuleRuns
from gwdesk.store.team import now_us

ATTEMPTS: Final = 8
FIRST_RETRY: Final = 1.0
LONGEST_RETRY: Final = 300.0
LEASE: Final = 60.0
"""Seconds a forward is this runner's while it tries it (then anyone's again)."""
TIMEOUT: Final = 10.0
IDLE: Final = 30.0
"""Seconds between looks when nothing wakes the forwarder (another runner's retries)."""
SIGNATURE: Final = "X-Gwdesk-Signature"
DELIVERY: Final = "X-Gwdesk-Delivery"

SecretOf = Callable[[str], bytes | None]
"""The signing secret of a rule, by name (None: none kept on this machine)."""


def signature(secret: bytes, body: bytes, at: int) -> str:
    """The signature header's value for `body` sent at `at` (unix seconds)."""
    mac = hmac.new(secret, f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={mac}"


def retry_after(attempts: int, first: float = FIRST_RETRY) -> float:
    """Seconds before try `attempts + 1`."""
    return float(min(LONGEST_RETRY, first * 2 ** max(0, attempts - 1)))


@dataclass(slots=True)
class RuleForwarder:
    runs: RuleRuns
    secret_of: SecretOf
    client: httpx.AsyncClient
    first_retry: float = FIRST_RETRY
    attempts: int = ATTEMPTS

    async def deliver_due(self) -> int:
        """Attempt every forward due now; how many were attempted."""
        tried = 0
        while True:
            forward = await asyncio.to_thread(self.runs.take_forward, int(LEASE * 1e6))
            if forward is None:
                return tried
            tried += 1
            error = await self._post(forward)
            retry = None
            if error and forward.attempts < self.attempts:
                retry = now_us() + int(retry_after(forward.attempts, self.first_retry) * 1e6)
            await asyncio.to_thread(self.runs.forward_done, forward.id, error=error, retry_at=retry)

    async def _post(self, forward: Forward) -> str:
        """'' when delivered, else why not (plain text)."""
        try:
            secret = self.secret_of(forward.rule)
        except Exception as exc:  # a keyring that cannot be read: said, not raised
            return f"the signing secret could not be read: {type(exc).__name__}"
        if not secret:
            return f"no signing secret for rule {forward.rule!r} on this machine"
        body = forward.body.encode()
        headers = {
            "Content-Type": "application/json",
            SIGNATURE: signature(secret, body, int(time.time())),
            DELIVERY: str(forward.id),
        }
        try:
            answer = await self.client.post(forward.url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {str(exc)[:200]}"
        if 200 <= answer.status_code < 300:
            return ""
        return f"the endpoint answered {answer.status_code}"

    async def serve(self, stop: asyncio.Event, wake: asyncio.Event) -> None:
        """Deliver forwards as they fall due until `stop` (`wake`: one was queued)."""
        while not stop.is_set():
            wake.clear()
            try:
                await self.deliver_due()
                due = await asyncio.to_thread(self.runs.next_forward_us)
            except StoreError:
                due = None  # the store is away: look again later
            wait = IDLE if due is None else max(0.0, min(IDLE, (due - now_us()) / 1e6))
            stopping = asyncio.ensure_future(stop.wait())
            woken = asyncio.ensure_future(wake.wait())
            try:
                await asyncio.wait({stopping, woken}, timeout=wait or 0.01,
                                   return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
            finally:
                stopping.cancel()
                woken.cancel()


def forwarding_client() -> httpx.AsyncClient:
    """An HTTP client for forwards: bounded time, no redirects (a forward goes where the
    rule says, not where an endpoint points)."""
    return httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False, trust_env=False)
