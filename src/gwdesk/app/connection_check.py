""" "Test connection" of the profiles dialog: one real, harmless call with the typed values.

A use case of the core (Qt-free): a coroutine the dialog runs on the event loop, so
the GUI never waits on the network. It asks for the balance (OAuth profiles get a
token first, so a wrong password shows here) and, when a Lodge URL is given,
fetches its WSDL: both are reads, nothing is sent. Retries are off: the operator
wants an answer now, not after a back-off.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Final

import httpx

from gwdesk.domain.errors import GatewayError
from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.gateway.service import GatewayService, HttpSettings, RetryPolicy

CHECK_TIMEOUT: Final = 20.0
CHECK_HTTP: Final = HttpSettings(connect=5.0, read=15.0, write=15.0, pool=5.0)


@dataclass(frozen=True, slots=True)
class CheckResult:
    ok: bool
    message: str


async def _lodge_answers(service: GatewayService, url: str) -> str | None:
    """None when the Lodge service hands out its WSDL, else why not (in plain words)."""
    try:
        response = await service.http.get(url, params={"WSDL": ""})
    except httpx.HTTPError as exc:
        return f"the Lodge URL could not be reached ({type(exc).__name__})"
    if response.status_code != 200 or b"definitions" not in response.content[:4096]:
        return f"the Lodge URL did not return a WSDL (HTTP {response.status_code})"
    return None


async def check_connection(
    profile: Profile, password: Secret, *, within: float = CHECK_TIMEOUT
) -> CheckResult:
    """Sign in and read the balance or credits (whichever account resource the gateway
    answers); a failure is a result, never an exception."""
    try:
        service = GatewayService(
            profile, password, http=CHECK_HTTP, retry=RetryPolicy(attempts=1, send_attempts=1)
        )
    except GatewayError as exc:
        return CheckResult(False, f"Connection failed: {exc.message}")
    try:
        async with asyncio.timeout(within):
            funds = await service.funds()
            lodge_problem = (
                await _lodge_answers(service, profile.lodge_url) if profile.lodge_url else None
            )
    except TimeoutError:
        return CheckResult(False, f"Connection failed: no answer within {within:.0f} s.")
    except GatewayError as exc:
        return CheckResult(False, f"Connection failed: {exc.message}")
    finally:
        await service.aclose()
    text = f"Connected: the gateway accepted {profile.username!r}; {funds.summary()}."
    if lodge_problem is not None:
        return CheckResult(False, f"{text} But {lodge_problem}.")
    if profile.lodge_url:
        text += " The Lodge service answered too."
    return CheckResult(True, text)
