"""Helpers for the fault-injection tests: a plain httpx client and a one-line send."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from gwdesk.sandbox.server import SandboxThread

DEMO = ("demo", "demo")
SEND = {"Message": "Hello from the fault tests", "Recipient": "61412345678"}


def client(sandbox: SandboxThread, timeout: float = 10.0) -> httpx.Client:
    """Basic auth and plain HTTP (no TLS context to build) against the sandbox."""
    return httpx.Client(base_url=sandbox.rest_url, auth=DEMO, timeout=timeout, verify=False)  # noqa: S501


def simple_send(http: httpx.Client) -> httpx.Response:
    return http.post("/v2/message/simple_send", json=SEND)


def lodged(sandbox: SandboxThread) -> int:
    count: int = sandbox.query("SELECT COUNT(*) FROM messages")[0][0]
    return count


def eventually(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll `check` until true: the server may still be finishing after the client gave up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def set_faults(sandbox: SandboxThread, spec: str, seed: int | None = 1) -> httpx.Response:
    with httpx.Client(base_url=sandbox.rest_url, timeout=10) as http:
        return http.put("/sandbox/faults", json={"spec": spec, "seed": seed})
