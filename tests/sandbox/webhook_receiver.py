"""A real HTTP endpoint on loopback for webhook tests, plus helpers to lodge and reply.

The receiver records every request exactly as it arrived (raw target, headers,
body) and answers from a script (status, body, a delay, or holding the request
until released), then `OK` once the script runs out.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from gwdesk.sandbox.server import SandboxThread
from gwdesk.sandbox.state import SandboxState

DEMO = ("demo", "demo")
CUSTOMER = "61412345678"
#: Built once: httpx builds a TLS context per client otherwise (30 ms each), even for http://.
TLS = ssl.create_default_context()
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: str = "OK"
    delay: float = 0.0
    hang: bool = False
    """Hold the request until the receiver is released or closed."""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Received:
    method: str
    target: str
    """The request target exactly as sent: path and query, still percent-encoded."""
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def raw_query(self) -> str:
        return urlsplit(self.target).query

    @property
    def params(self) -> dict[str, list[str]]:
        return parse_qs(self.raw_query, keep_blank_values=True, strict_parsing=True)

    @property
    def form(self) -> dict[str, list[str]]:
        return parse_qs(self.body.decode("ascii"), keep_blank_values=True, strict_parsing=True)


class Receiver:
    """A threaded HTTP server on 127.0.0.1 that records requests and plays a script."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._script: deque[Answer] = deque()
        self._changed = threading.Condition()
        self._released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                receiver._handle(self)

            def do_POST(self) -> None:
                receiver._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *answers: Answer) -> None:
        self._script.extend(answers)

    def release(self) -> None:
        self._released.set()

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        """The first `count` requests, waiting for them to arrive."""
        with self._changed:
            arrived = self._changed.wait_for(lambda: len(self.requests) >= count, timeout)
            assert arrived, f"{len(self.requests)} of {count} requests arrived"
            return list(self.requests[:count])

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        with self._changed:
            self.requests.append(
                Received(
                    handler.command, handler.path, dict(handler.headers), body, time.monotonic()
                )
            )
            answer = self._script.popleft() if self._script else Answer()
            self._changed.notify_all()
        if answer.hang:
            self._released.wait(30)
        if answer.delay:
            time.sleep(answer.delay)
        payload = answer.body.encode("utf-8")
        try:
            handler.send_response(answer.status)
            for name, value in answer.headers.items():
                handler.send_header(name, value)
            handler.send_header("Content-Type", "text/plain; charset=utf-8")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except OSError:
            pass  # the sandbox gave up waiting and hung up


# ---- talking to the sandbox ----------------------------------------------------------------


def control(sandbox: SandboxThread) -> httpx.Client:
    return httpx.Client(base_url=sandbox.rest_url, timeout=10, verify=TLS)


def lodge(
    sandbox: SandboxThread,
    reply_type: str | None = None,
    reply_path: str | None = None,
    recipients: tuple[str, ...] = (CUSTOMER,),
    message: str = "Your appointment is at 10:00 tomorrow. Reply YES to confirm.",
) -> str:
    """Send through the REST face with plain httpx; the MessageId (or BatchCode) it got."""
    body: dict[str, Any] = {"Message": message, "Recipients": list(recipients)}
    if reply_type is not None:
        body["ReplyType"] = reply_type
        body["ReplyPath"] = reply_path
    with httpx.Client(base_url=sandbox.rest_url, auth=DEMO, timeout=10, verify=TLS) as client:
        response = client.post("/v2/message/send", json=body)
    assert response.status_code == 200, response.text
    data = response.json()["Data"]
    code: str = data["Message"]["MessageId"] if len(recipients) == 1 else data["BatchCode"]
    return code


def make_reply(sandbox: SandboxThread, **body: Any) -> dict[str, Any]:
    with control(sandbox) as client:
        response = client.post("/sandbox/replies", json=body)
    assert response.status_code == 201, response.text
    reply: dict[str, Any] = response.json()
    return reply


def attempts(sandbox: SandboxThread, reply_id: str) -> list[dict[str, Any]]:
    with control(sandbox) as client:
        response = client.get(f"/sandbox/replies/{reply_id}/attempts")
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()
    return found


def wait_for_attempts(
    sandbox: SandboxThread, reply_id: str, count: int, timeout: float = 5.0
) -> list[dict[str, Any]]:
    """The reply's recorded attempts once there are at least `count` of them."""
    deadline = time.monotonic() + timeout
    while True:
        found = attempts(sandbox, reply_id)
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, f"{len(found)} of {count} attempts recorded: {found}"
        time.sleep(0.02)


def delivering(sandbox: SandboxThread, reply_id: str) -> bool:
    """Whether the gateway still has a call for the reply under way or a retry to come."""
    suffix = f"-{reply_id}"

    def busy(state: SandboxState) -> bool:
        names = (task.get_name() for task in state.tasks if not task.done())
        return any(name.startswith("webhook-") and name.endswith(suffix) for name in names)

    return sandbox.call(busy)


def wait_until_delivered(
    sandbox: SandboxThread, reply_id: str, timeout: float = 5.0
) -> list[dict[str, Any]]:
    """The reply's attempts once the gateway is done calling for it (answered OK, or given
    up): the event after which no more calls for it can come."""
    deadline = time.monotonic() + timeout
    while delivering(sandbox, reply_id):
        assert time.monotonic() < deadline, f"still delivering {reply_id} after {timeout} s"
        time.sleep(0.02)
    return attempts(sandbox, reply_id)


def wall(moment: datetime) -> str:
    """`dd-MMM-yyyy HH:mm:ss` built independently of the code under test."""
    return f"{moment:%d}-{MONTHS[moment.month - 1]}-{moment:%Y %H:%M:%S}"
