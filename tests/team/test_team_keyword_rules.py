"""Keyword rules run by the office's receiver while every desk is closed, on a team's
server and on one workstation's file: the rules added at a desk with `gwdesk rules`,
replies arriving through the receiver's ReplyPath, the sandbox as the gateway (what it
was asked to send is what was sent)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.contract.listener_support import Listening, Starter
from tests.resilience.test_crash_resume import wait_loaded
from tests.team.test_team_desks import Office, midday_zone, office, start

__all__ = ["office", "start"]  # the fixtures, shared with the desks' tests

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX processes")

CUSTOMER = "61412345678"
OPTED_OUT = "61412000111"
AWAY = "61412000222"
OURS = "61400000000"
HOURS_TEXT = "We are open 9 to 5, Monday to Friday."


def say(template: str, sender: str, text: str, seconds: int) -> None:
    """The gateway's webhook for one reply (stored before the receiver answers OK)."""
    called = (
        template.replace("#FROM#", sender)
        .replace("#TO#", OURS)
        .replace("#MSG#", httpx.QueryParams({"m": text})["m"].replace(" ", "%20"))
        .replace("#SENTDTS#", f"20-Nov-2026%2009%3A00%3A{seconds:02d}")
        .replace("#RCVDDTS#", f"20-Nov-2026%2009%3A00%3A{seconds:02d}")
    )
    assert httpx.get(called, timeout=30).text == "OK"


def receiver(
    office: Office, start: Starter, env: dict[str, str] | None = None
) -> tuple[Listening, str]:
    zone = ["--timezone", midday_zone()]
    command, base = office.command(
        "receiver", "listen", "--port", "0", "--quiet", "--no-backfill", *zone
    )
    listening = start(*command[4:], env={**base, **(env or {})})
    return listening, listening.line()


def next_run(listening: Listening, rule: str, timeout: float = 60) -> str:
    """The receiver's note of the next run of `rule` (waiting for it to be written)."""
    while True:
        line = listening.notes.get(timeout=timeout)
        if f"rule {rule} on reply" in line:
            return line


def sent_to(office: Office, number: str) -> list[str]:
    wait_loaded(office.sandbox)
    return [
        t
        for (t,) in office.sandbox.query(
            "SELECT message FROM messages WHERE to_number = ?", (number,)
        )
    ]


def add_rule(office: Office, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    command, base = office.command("alex", "rules", "add", *args, "--json")

    done = subprocess.run(
        command, capture_output=True, text=True, env={**base, **(env or {})}, timeout=60
    )
    assert done.returncode == 0, done.stderr
    added: dict[str, Any] = json.loads(done.stdout)
    return added


def test_the_receiver_answers_hours_once_a_day_with_every_desk_closed(
    office: Office, start: Starter
) -> None:
    add_rule(office, "hours", "--whole", "HOURS", "--reply", HOURS_TEXT)
    listening, template = receiver(office, start)
    say(template, CUSTOMER, "Hours?", 1)
    listening.note("automatic reply sent", timeout=60)
    say(template, CUSTOMER, "HOURS", 2)
    listening.note("already in 24 hours (at most 1)", timeout=60)
    listening.stop()
    assert sent_to(office, CUSTOMER) == [HOURS_TEXT]


def test_the_receiver_never_answers_a_number_that_opted_out(office: Office, start: Starter) -> None:
    add_rule(office, "hours", "--whole", "HOURS", "--reply", HOURS_TEXT)
    listening, template = receiver(office, start)
    say(template, OPTED_OUT, "STOP", 1)
    say(template, OPTED_OUT, "hours", 2)
    outcome = listening.note("automatic reply not sent", timeout=60)
    listening.stop()
    assert "opted out" in outcome
    assert sent_to(office, OPTED_OUT) == []


def test_two_auto_responders_facing_each_other_stop_at_the_daily_limit(
    office: Office, start: Starter
) -> None:
    add_rule(
        office,
        "away",
        "--pattern",
        "*away*",
        "--reply",
        "Thanks, we will call you back",
        "--per-day",
        "3",
    )
    listening, template = receiver(office, start)
    # The customer's phone answers every message it gets with its own auto-reply.
    outcomes = []
    for turn in range(1, 6):
        say(template, AWAY, "Auto-reply: I am away until Monday", turn)
        outcomes.append(next_run(listening, "away"))
    assert [o.endswith("automatic reply sent") for o in outcomes] == [True] * 3 + [False] * 2
    assert "already in 24 hours (at most 3)" in outcomes[-1]
    listening.stop()
    assert sent_to(office, AWAY) == ["Thanks, we will call you back"] * 3


class Endpoint:
    """A CRM's webhook that fails twice, then takes what it is sent."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, bytes, dict[str, str]]] = []
        self.taken = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = 500 if len(endpoint.calls) < 2 else 200
                endpoint.calls.append((status, body, dict(self.headers)))
                self.send_response(status)
                self.end_headers()
                if status == 200:
                    endpoint.taken.set()

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/replies"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    made = Endpoint()
    yield made
    made.server.shutdown()


def test_a_forward_to_an_endpoint_that_fails_twice_arrives_once_signed(
    office: Office, start: Starter, endpoint: Endpoint
) -> None:
    keyring = {"PYTHON_KEYRING_BACKEND": "tests.keyrings.MemoryKeyring", "PYTHONPATH": os.getcwd()}
    added = add_rule(office, "crm", "--pattern", "*order*", "--forward", endpoint.url, env=keyring)
    secret = added["secret"].encode()
    listening, template = receiver(office, start, env={"GWDESK_RULE_SECRET": added["secret"]})
    say(template, CUSTOMER, "Where is my <b>order</b>?", 1)
    assert endpoint.taken.wait(60)
    listening.stop()
    assert [status for status, _, _ in endpoint.calls] == [500, 500, 200]
    _, body, headers = endpoint.calls[-1]
    stamp, mac = (part.split("=", 1)[1] for part in headers["X-Gwdesk-Signature"].split(","))
    assert mac == hmac.new(secret, f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    assert json.loads(body)["reply"]["text"] == "Where is my <b>order</b>?"
    assert len({h["X-Gwdesk-Delivery"] for _, _, h in endpoint.calls}) == 1
