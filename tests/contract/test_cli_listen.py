"""`gwdesk listen` as a real subprocess: its template first, then one line per stored reply."""

from __future__ import annotations

import json
import signal
import socket
import unicodedata
from collections.abc import Iterator

import httpx
import pytest

from gwdesk.domain.hidden_chars import HIDDEN_CATEGORIES
from gwdesk.replies.template import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from tests.contract.listener_support import (
    Starter,
    listen_processes,
    webhook_values,
)
from tests.sandbox.webhook_receiver import lodge, make_reply

#: A window title, a screen clear, an OSC 52 clipboard write, an OSC 8 link, the
#: 8-bit CSI, a faked line, a right-to-left override and NUL, in a customer's reply.
HOSTILE = (
    "\x1b]0;t\x07\x1b[2J\x1b]52;c;b3duZWQ=\x07\x1b]8;;https://e.example/\x07x\x1b]8;;\x07"
    "\x9b2J\r\nFAKE\u202eA\x00B"
)
HOSTILE_SHOWN = (
    "\\x1b]0;t\\x07\\x1b[2J\\x1b]52;c;b3duZWQ=\\x07\\x1b]8;;https://e.example/\\x07x\\x1b]8;;\\x07"
    "\\x9b2J\\r\\nFAKE\\u202eA\\x00B"
)


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


def test_ctrl_c_stops_it_even_when_it_started_with_ctrl_c_ignored(start: Starter) -> None:
    listening = start("--port", "0", ctrl_c_ignored=True)
    template = ReplyTemplate.parse(listening.line())
    assert httpx.get(template.fill(webhook_values(MSG="Before the stop"))).text == "OK"
    assert listening.line().endswith("Before the stop")
    code, errors = listening.stop(signal.SIGINT)
    assert code == 0
    assert errors.endswith("gwdesk: stopped\n")


def test_a_hostile_reply_prints_escaped_on_its_one_line(start: Starter) -> None:
    listening = start("--port", "0")
    template = ReplyTemplate.parse(listening.line())
    assert httpx.get(template.fill(webhook_values(MSG=HOSTILE))).text == "OK"
    assert listening.line() == f"2024-01-05 14:04:07  61412345678 -> 61400000000  {HOSTILE_SHOWN}"
    code, _ = listening.stop()
    assert code == 0


def test_a_hostile_reply_prints_as_json_holding_exactly_its_text(start: Starter) -> None:
    listening = start("--port", "0", "--json")
    template = ReplyTemplate.parse(listening.line())
    assert httpx.get(template.fill(webhook_values(MSG=HOSTILE))).text == "OK"
    line = listening.line()
    assert json.loads(line)["text"] == HOSTILE
    assert [c for c in line if unicodedata.category(c) in HIDDEN_CATEGORIES] == []
    code, _ = listening.stop()
    assert code == 0


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
        listening.process.wait(timeout=15)
    code, errors = listening.stop()  # it has ended: this collects what it wrote
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
