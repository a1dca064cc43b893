"""`gwdesk-sandbox reply`, run as the installed command against a running sandbox."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.sandbox.webhook_receiver import CUSTOMER, Receiver, lodge

COMMAND = Path(sys.prefix) / "bin" / "gwdesk-sandbox"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    yield running
    running.close()


def run_reply(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMMAND), "reply", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=30,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        check=False,
    )


def test_reply_command_makes_a_reply_and_prints_it(
    sandbox: SandboxThread, receiver: Receiver
) -> None:
    message_id = lodge(sandbox, "HTTP", f"{receiver.url}/cli?m=#MSG#")
    done = run_reply(
        "--to-message", message_id, "--text", "Yes ✅ & thanks", "--url", sandbox.rest_url
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["MessageId"] == message_id
    assert printed["From"] == CUSTOMER
    assert printed["Text"] == "Yes ✅ & thanks"
    assert printed["WebhookUrl"] == f"{receiver.url}/cli?m=Yes%20%E2%9C%85%20%26%20thanks"
    [request] = receiver.wait_for(1)
    assert request.params == {"m": ["Yes ✅ & thanks"]}
    assert sandbox.query("SELECT reply_id FROM replies") == [(printed["ReplyId"],)]


def test_reply_command_reports_an_unknown_message(sandbox: SandboxThread) -> None:
    done = run_reply("--to-message", "nope", "--text", "hi", "--url", sandbox.rest_url)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip() == "gwdesk-sandbox: 404: No message has MessageId 'nope'."


def test_reply_command_reports_an_unreachable_sandbox() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{closed_port}"
    done = run_reply("--to-message", "1", "--text", "hi", "--url", url)
    assert done.returncode == 1
    assert done.stderr.startswith(f"gwdesk-sandbox: cannot reach {url}:")
    assert "Traceback" not in done.stderr
