"""Shared set-up of the REST client's contract tests: profiles and services for a sandbox."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.sending import Outcome, Sending
from gwdesk.app.sms import Channel, SmsForm, SmsMessage
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.http import HttpSettings
from gwdesk.gateway.retry import RetryPolicy
from gwdesk.gateway.service import GatewayService
from gwdesk.sandbox.server import SandboxThread

#: Retries and status look-ups scaled down so fault tests take seconds, not minutes.
FAST = RetryPolicy(
    base_delay=0.01,
    max_delay=0.05,
    max_retry_after=2.0,
    resolve_window=1.0,
    resolve_first_delay=0.02,
    resolve_max_delay=0.1,
)


def profile_for(sandbox: SandboxThread, **overrides: Any) -> Profile:
    fields: dict[str, Any] = {
        "name": "sandbox",
        "rest_url": sandbox.rest_url,
        "lodge_url": sandbox.lodge_url,
        "username": "demo",
        "timezone": sandbox.config.timezone,
    }
    fields.update(overrides)
    return Profile(**fields)


def service_for(
    sandbox: SandboxThread,
    password: str = "demo",  # noqa: S107 - the sandbox's demo account
    *,
    retry: RetryPolicy = FAST,
    http: HttpSettings | None = None,
    **overrides: Any,
) -> GatewayService:
    return GatewayService(
        profile_for(sandbox, **overrides), Secret(password), retry=retry, http=http
    )


def endpoint_requests(sandbox: SandboxThread, endpoint: str) -> int:
    """How many requests reached one endpoint of the sandbox (its fault counters)."""
    snapshot = httpx.get(f"{sandbox.rest_url}/sandbox/faults").json()
    return int(snapshot["requests"].get(endpoint, 0))


def fault_snapshot(sandbox: SandboxThread) -> dict[str, Any]:
    result: dict[str, Any] = httpx.get(f"{sandbox.rest_url}/sandbox/faults").json()
    return result


def set_faults(sandbox: SandboxThread, spec: str, seed: int = 1) -> None:
    response = httpx.put(f"{sandbox.rest_url}/sandbox/faults", json={"spec": spec, "seed": seed})
    response.raise_for_status()


@contextlib.asynccontextmanager
async def sending_with(service: GatewayService, folder: Path) -> AsyncIterator[Sending]:
    """The application core's sends of `service`, over a profile store in `folder`."""
    data = ProfileData(
        folder / "profile.sqlite3", account_key(service.profile), service.profile.region
    )
    store = await asyncio.to_thread(open_profile, data)
    try:
        yield sending_for(service, store, data)
    finally:
        await asyncio.to_thread(store.close)


async def send_one(sending: Sending, text: str, recipient: str, **options: Any) -> Outcome:
    """One SMS over REST as the Send tab sends it (checked, recorded, sent)."""
    form = SmsForm(Channel.REST_SMS, recipient=recipient, text=text, **options)
    return await sending.send_message(form)


async def send_list(
    sending: Sending, text: str, numbers: Sequence[str], *, lanes: int = 4, **options: Any
) -> Outcome:
    """A list of numbers already in international form, as `gwdesk send` and the Batch
    tab send it (in requests of 100); `options` are `SmsMessage` fields."""
    message = SmsMessage(Channel.REST_SMS, text, **options)
    return await sending.send_list(message, numbers, lanes=lanes)
