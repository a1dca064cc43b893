"""Shared set-up of the REST client's contract tests: profiles and services for a sandbox."""

from __future__ import annotations

from typing import Any

import httpx

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
