"""A STOP received by `gwdesk listen` stops `gwdesk send`: real processes, the sandbox over loopback.

`gwdesk listen` with a gateway's options stores into that account's profile store, so
a customer's STOP (a real webhook from the sandbox) puts the number on the list that
`gwdesk optouts` shows and `gwdesk send` honours.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gwdesk.replies.template import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.listener_support import Listening, Starter, listen_processes
from tests.sandbox.webhook_receiver import make_reply, wait_until_delivered

GWDESK = str(Path(sys.executable).with_name("gwdesk"))
PASSWORD = "cli-S3cret-pw"
CUSTOMER = "61412345678"
INSTRUCTION = "Reply STOP to opt out"


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


@pytest.fixture
def start() -> Iterator[Starter]:
    with listen_processes() as run:
        yield run


def gwdesk(gateway: SandboxThread, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    """A command of the `ops` account, as a script would run it (data dir: the test's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
    env["GWDESK_DATA_DIR"] = os.environ["GWDESK_DATA_DIR"]
    env["GWDESK_PASSWORD"] = PASSWORD
    where = ["--base-url", gateway.rest_url, "--username", "ops"]
    return subprocess.run(
        [GWDESK, command, *where, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def listen(
    start: Starter, gateway: SandboxThread, *extra: str, port: int = 0
) -> tuple[Listening, str]:
    """`gwdesk listen` for the `ops` account; its ReplyPath template."""
    listening = start(
        "--base-url", gateway.rest_url, "--username", "ops", "--port", str(port), "--json",
        *extra, password=PASSWORD,
    )  # fmt: skip
    return listening, listening.line()


@dataclass(frozen=True)
class Stopped:
    message_id: str
    """The message the customer answered STOP."""
    port: int
    """Where its replies go (the listener's)."""


def reply(gateway: SandboxThread, listening: Listening, message_id: str, text: str) -> None:
    """The customer answers; the listener prints the reply once it is stored."""
    made = make_reply(gateway, message_id=message_id, text=text)
    assert wait_until_delivered(gateway, made["ReplyId"])[-1]["Ok"]
    assert json.loads(listening.line())["text"] == text


def two_way(gateway: SandboxThread, template: str) -> str:
    sent = gwdesk(
        gateway, "send", "Your order is ready. Any question? Just reply.", "--to", "0412 345 678",
        "--reply-type", "HTTP", "--reply-path", template, "--json",
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    message_id: str = json.loads(sent.stdout)["requests"][0]["message"]["MessageId"]
    return message_id


@pytest.fixture
def stopped(gateway: SandboxThread, start: Starter) -> Stopped:
    """The customer replied STOP to a two-way message, received by `gwdesk listen`."""
    listening, template = listen(start, gateway, "--no-backfill")
    message_id = two_way(gateway, template)
    reply(gateway, listening, message_id, "STOP")
    code, errors = listening.stop()
    assert code == 0, errors
    return Stopped(message_id, ReplyTemplate.parse(template).port)


def texted(gateway: SandboxThread, number: str = CUSTOMER) -> int:
    return int(gateway.query("SELECT COUNT(*) FROM messages WHERE to_number = ?", (number,))[0][0])


def test_a_stop_received_by_gwdesk_listen_is_on_the_accounts_list(
    gateway: SandboxThread, stopped: Stopped
) -> None:
    listed = gwdesk(gateway, "optouts", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["opted_out"] == 1
    [row] = data["numbers"]
    assert (row["number"], row["keyword"], row["how"]) == (CUSTOMER, "STOP", "reply (webhook)")


def test_gwdesk_send_to_the_opted_out_number_exits_1_with_the_reason(
    gateway: SandboxThread, stopped: Stopped
) -> None:
    refused = gwdesk(gateway, "send", "Last chance: 20% off", "--to", "0412 345 678")
    assert refused.returncode == 1
    assert f"Not sent: {CUSTOMER} opted out by replying STOP on " in refused.stderr
    assert refused.stdout == ""
    assert texted(gateway) == 1  # the two-way message before the STOP, nothing since


def test_gwdesk_send_factual_reaches_the_opted_out_number(
    gateway: SandboxThread, stopped: Stopped
) -> None:
    sent = gwdesk(gateway, "send", "Your parcel was delivered.", "--to", CUSTOMER, "--factual")
    assert sent.returncode == 0, sent.stderr
    assert texted(gateway) == 2


def test_gwdesk_send_csv_lodges_249_of_250_and_reports_the_1_excluded(
    gateway: SandboxThread, stopped: Stopped, tmp_path: Path
) -> None:
    source = tmp_path / "customers.csv"
    numbers = [f"0412 {i // 1000:03d} {i % 1000:03d}" for i in range(249)]
    numbers.insert(100, "+61 412 345 678")
    with source.open("w", newline="") as handle:
        csv.writer(handle).writerows(
            [("Name", "Mobile"), *((f"C{i}", n) for i, n in enumerate(numbers))]
        )
    sent = gwdesk(gateway, "send", "Spring sale today", "--csv", str(source), "--yes", "--json")
    assert sent.returncode == 0, sent.stderr
    report = json.loads(sent.stdout)
    assert (report["lodged"], report["excluded"]) == (249, 1)
    assert report["excluded_numbers"] == [CUSTOMER]
    assert texted(gateway) == 1


def test_gwdesk_send_csv_says_how_many_were_excluded(
    gateway: SandboxThread, stopped: Stopped, tmp_path: Path
) -> None:
    source = tmp_path / "few.csv"
    source.write_text("0412 345 678\n0412 000 001\n0412 000 002\n")
    sent = gwdesk(gateway, "send", "Spring sale today", "--csv", str(source), "--yes")
    assert sent.returncode == 0, sent.stderr
    assert "1 opted-out recipient(s) excluded (not texted)" in sent.stdout


def test_the_same_stop_fetched_by_the_backfill_of_gwdesk_listen_adds_nothing(
    gateway: SandboxThread, stopped: Stopped, start: Starter
) -> None:
    listening, _template = listen(start, gateway)  # backfills on start
    assert "1 at the gateway, 0 were missing" in listening.note("backfill since")
    code, _errors = listening.stop()
    assert code == 0
    listed = json.loads(gwdesk(gateway, "optouts", "list", "--json").stdout)
    assert listed["opted_out"] == 1


def test_start_received_by_gwdesk_listen_lets_gwdesk_send_text_the_number_again(
    gateway: SandboxThread, stopped: Stopped, start: Starter
) -> None:
    listening, _template = listen(start, gateway, "--no-backfill", port=stopped.port)
    reply(gateway, listening, stopped.message_id, "start")
    listening.stop()
    sent = gwdesk(gateway, "send", "Welcome back", "--to", "0412 345 678")
    assert sent.returncode == 0, sent.stderr
    assert texted(gateway) == 2


def test_please_dont_stop_received_by_gwdesk_listen_opts_nobody_out(
    gateway: SandboxThread, start: Starter
) -> None:
    listening, template = listen(start, gateway, "--no-backfill")
    reply(gateway, listening, two_way(gateway, template), "Please don't stop my order")
    listening.stop()
    listed = json.loads(gwdesk(gateway, "optouts", "list", "--json").stdout)
    assert listed["opted_out"] == 0


def test_a_marketing_message_reaches_the_gateway_ending_with_the_instruction(
    gateway: SandboxThread,
) -> None:
    sent = gwdesk(gateway, "send", "Half price today", "--to", "0412 000 111", "--marketing")
    assert sent.returncode == 0, sent.stderr
    [(text,)] = gateway.query("SELECT message FROM messages")
    assert text == f"Half price today\n{INSTRUCTION}"


def test_a_marketing_message_from_a_sender_name_is_refused(gateway: SandboxThread) -> None:
    refused = gwdesk(
        gateway, "send", "Half price", "--to", "0412 000 111", "--marketing", "--from", "ACME"
    )
    assert refused.returncode == 1
    assert "must let the recipient reply STOP" in refused.stderr
    assert texted(gateway, "61412000111") == 0


def test_marketing_and_factual_together_are_refused(gateway: SandboxThread) -> None:
    refused = gwdesk(gateway, "send", "Sale", "--to", "0412 000 111", "--marketing", "--factual")
    assert refused.returncode == 1
    assert "either marketing or purely factual" in refused.stderr


def test_a_sender_name_over_11_characters_goes_with_a_warning(gateway: SandboxThread) -> None:
    sent = gwdesk(gateway, "send", "Hello", "--to", "0412 000 111", "--from", "HarbourDental")
    assert sent.returncode == 0, sent.stderr
    assert "--from: 13 characters: phones show at most 11" in sent.stderr


def test_a_sender_name_breaking_acmas_rules_is_refused(gateway: SandboxThread) -> None:
    refused = gwdesk(gateway, "send", "Hello", "--to", "0412 000 111", "--from", "Unverified")
    assert refused.returncode == 1
    assert '"Unverified" is what phones show' in refused.stderr


def test_gwdesk_listen_without_a_gateway_says_a_stop_changes_no_list(start: Starter) -> None:
    listening = start("--port", "0")
    listening.line()
    assert "a STOP changes no account's opt-out list" in listening.note("no gateway named")
    code, _errors = listening.stop()
    assert code == 0
