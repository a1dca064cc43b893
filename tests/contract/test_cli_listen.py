"""`gwdesk listen` as a real subprocess: its template first, then one line per stored reply."""

from __future__ import annotations

import json
import signal
import socket
from collections.abc import Iterator

import httpx
import pytest

from gwdesk.replies.template import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from tests.contract.listener_support import (
    Starter,
    listen_processes,
    webhook_values,
)
from tests.sandbox.webhook_receiver import lodge, make_reply


@pytest.fixture
def start() -> Iterator[Starter]:
    with listen_processes() as run:
        yield run


def test_the_first_line_is_the_template_and_a_reply_comes_out_as_json(start: Starter) -> None:
    listening = start("--port", "0", "--json")
    template = ReplyTemplate.parse(listening.line())
    assert template.host == "127.0.0.1"
    response = httpx.get(template.fill(webhook_values(MSG="Yes, 10:00 suits")))
    assert (response.status_code, response.text) == (200, "OK")
    printed = json.loads(listening.line())
    assert printed["from"] == "61412345678"
    assert printed["text"] == "Yes, 10:00 suits"
    assert printed["received_at"] == "2024-01-05T03:04:07+00:00"
    assert printed["source"] == "webhook"
    code, errors = listening.stop()
    assert code == 0
    assert "stopped" in errors
    assert "Traceback" not in errors


def test_a_retried_reply_prints_once(start: Starter) -> None:
    listening = start("--port", "0")
    template = ReplyTemplate.parse(listening.line())
    url = template.fill(webhook_values(MSG="Only\nonce"))
    for _ in range(3):
        assert httpx.get(url).text == "OK"
    assert httpx.get(template.fill(webhook_values(MSG="Next"))).text == "OK"
    first, second = listening.line(), listening.line()
    assert first == "2024-01-05 14:04:07  61412345678 -> 61400000000  Only\\nonce"
    assert second.endswith("Next")
    code, _ = listening.stop(signal.SIGTERM)
    assert code == 0


def test_a_taken_port_is_refused_with_a_free_one_suggested(start: Starter) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        listening = start("--port", str(taken))
        code = listening.process.wait(timeout=15)
    assert listening.process.stderr is not None
    errors = listening.process.stderr.read()
    assert code == 2
    assert f"Port {taken} on 127.0.0.1 is already in use; port " in errors
    assert "Traceback" not in errors


def test_binding_to_every_interface_prints_a_warning(start: Starter) -> None:
    listening = start("--host", "0.0.0.0", "--port", "0", "--public-host", "desk.example")  # noqa: S104
    assert listening.line().startswith("http://desk.example:")
    code, errors = listening.stop()
    assert code == 0
    assert "warning: The reply listener is reachable from other machines" in errors


def test_with_a_gateway_it_backfills_replies_made_while_nobody_listened(
    start: Starter, sandbox: SandboxThread
) -> None:
    make_reply(sandbox, message_id=lodge(sandbox), text="Sent while down")
    listening = start(
        "--base-url", sandbox.rest_url, "--username", "demo", "--port", "0", "--json",
        password="demo",
    )  # fmt: skip
    listening.line()  # the template
    printed = json.loads(listening.line())
    assert (printed["text"], printed["source"]) == ("Sent while down", "backfill")
    code, errors = listening.stop()
    assert code == 0
    assert "1 at the gateway, 1 were missing" in errors
