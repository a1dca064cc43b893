"""Untrusted text stays text: the real `gwdesk` shows hostile text escaped, never obeyed.

A message's text and ExternalSystemId lodged in the sandbox, a status the Lodge
service answers, a gateway's error message and a file name each carry escape
sequences, C1 controls, line breaks and bidi overrides; every human-readable line
shows them as escapes, and `--json` still decodes to exactly the text.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from gwdesk.domain.hidden_chars import HIDDEN_CATEGORIES
from gwdesk.sandbox.server import SandboxThread
from tests.contract import test_cli, test_cli_lodge
from tests.contract.lodge_client_support import only_message
from tests.sandbox.webhook_receiver import Answer, Receiver

#: Window title, screen clear, 8-bit CSI, a faked second line, a right-to-left override.
TEXT = "\x1b]0;t\x07\x1b[2J\x9b2JA\nB\u202eC"
TEXT_SHOWN = "\\x1b]0;t\\x07\\x1b[2J\\x9b2JA\\nB\\u202eC"
#: An OSC 52 clipboard write and an OSC 8 link in a reference the sender chose.
EXTERNAL_ID = "JOB\x1b]52;c;ZWNobyBvd25lZA==\x07\x1b]8;;https://e.example/\x07x\x1b]8;;\x07"
EXTERNAL_ID_SHOWN = (
    "JOB\\x1b]52;c;ZWNobyBvd25lZA==\\x07\\x1b]8;;https://e.example/\\x07x\\x1b]8;;\\x07"
)


def hidden_in(output: str) -> list[str]:
    """Characters a terminal would act on, other than the line ends between lines."""
    return [c for c in output if c != "\n" and unicodedata.category(c) in HIDDEN_CATEGORIES]


def lodge_run(gateway: SandboxThread, *args: str) -> subprocess.CompletedProcess[str]:
    """A Lodge command (`gwdesk mms|fax|wap|lodge-status`) as the sandbox's "ops"."""
    return test_cli_lodge.run(gateway, *args, password=test_cli.PASSWORD)


@pytest.fixture
def gateway(sandbox_factory: test_cli.SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", test_cli.PASSWORD)])


@pytest.fixture
def lodged(gateway: SandboxThread) -> SandboxThread:
    """The sandbox holding one message whose text and ExternalSystemId are hostile."""
    done = test_cli.run(gateway, "send", "--to", "0412345678", "--external-id", EXTERNAL_ID, TEXT)
    assert done.returncode == 0, done.stderr
    assert gateway.query("SELECT message, external_system_id FROM messages") == [
        (TEXT, EXTERNAL_ID)
    ]
    return gateway


@pytest.fixture
def hostile_gateway() -> Iterator[Receiver]:
    receiver = Receiver()
    yield receiver
    receiver.close()


def test_a_send_report_shows_the_external_id_escaped(gateway: SandboxThread) -> None:
    done = test_cli.run(gateway, "send", "--to", "0412345678", "--external-id", EXTERNAL_ID, TEXT)
    assert done.returncode == 0, done.stderr
    assert f"ExternalSystemId {EXTERNAL_ID_SHOWN}" in done.stdout
    assert hidden_in(done.stdout + done.stderr) == []


def test_status_shows_a_hostile_external_id_escaped(lodged: SandboxThread) -> None:
    done = test_cli.run(lodged, "status", "--external-id", EXTERNAL_ID)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert line.endswith(f"  {EXTERNAL_ID_SHOWN}")
    assert hidden_in(done.stdout) == []


def test_status_as_json_holds_the_external_id_exactly(lodged: SandboxThread) -> None:
    done = test_cli.run(lodged, "status", "--json", "--external-id", EXTERNAL_ID)
    assert done.returncode == 0, done.stderr
    [message] = json.loads(done.stdout)["messages"]
    assert message["ExternalSystemId"] == EXTERNAL_ID
    assert hidden_in(done.stdout) == []


def test_logs_show_a_hostile_message_text_escaped_on_its_one_line(lodged: SandboxThread) -> None:
    done = test_cli.run(lodged, "logs", "--recipient", "0412345678")
    assert done.returncode == 0, done.stderr
    record, summary = done.stdout.splitlines()
    assert record.endswith(f"  {TEXT_SHOWN}")
    assert summary == "1 shown of 1"
    assert hidden_in(done.stdout) == []


def test_logs_as_json_hold_the_message_text_exactly(lodged: SandboxThread) -> None:
    done = test_cli.run(lodged, "logs", "--json", "--recipient", "0412345678")
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)["messages"]
    assert record["message"] == TEXT
    assert hidden_in(done.stdout) == []


@pytest.fixture
def hostile_account(gateway: SandboxThread) -> SandboxThread:
    """The sandbox whose account resources name the account and its type with `TEXT`."""
    answer = httpx.put(
        f"{gateway.rest_url}/sandbox/account",
        json={"account": "ops", "name": TEXT, "type_name": TEXT},
    )
    assert answer.status_code == 200, answer.text
    return gateway


def test_balance_shows_the_gateways_account_type_escaped(hostile_account: SandboxThread) -> None:
    done = test_cli.run(hostile_account, "balance")
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert line.startswith("Credits 10,000 (Account/Info, ⟨U+001B⟩]0;t⟨U+0007⟩⟨U+001B⟩[2J")
    assert hidden_in(done.stdout + done.stderr) == []


def test_balance_as_json_holds_the_accounts_words_exactly(hostile_account: SandboxThread) -> None:
    done = test_cli.run(hostile_account, "balance", "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["AccountName"], answer["AccountType"]) == (TEXT, TEXT)
    assert hidden_in(done.stdout) == []


def test_a_hostile_lodge_status_is_shown_escaped(gateway: SandboxThread) -> None:
    sent = lodge_run(gateway, "wap", "--PhoneNumber", "0412345678", "--URL", "https://e.com/")
    assert sent.returncode == 0, sent.stderr
    msg_id = only_message(gateway)["message_id"]
    # XML carries no C0 control but a tab, a line break, C1 controls and bidi overrides.
    status = "ACTIVE\x9b2J\tX\nY\u202eZ\u2028W"
    gateway.call(
        lambda state: state.conn.execute(
            "UPDATE messages SET status = ?, deliver_at_us = NULL WHERE message_id = ?",
            (status, msg_id),
        )
    )
    shown = lodge_run(gateway, "lodge-status", "--MsgID", msg_id)
    exact = lodge_run(gateway, "lodge-status", "--json", "--MsgID", msg_id)
    assert shown.returncode == exact.returncode == 0, shown.stderr + exact.stderr
    [line] = shown.stdout.splitlines()
    assert "  ACTIVE\\x9b2J\\tX\\nY\\u202eZ\\u2028W  lodged " in line
    assert hidden_in(shown.stdout) == []
    assert json.loads(exact.stdout)["Status"] == status
    assert hidden_in(exact.stdout) == []


def test_a_gateway_error_message_is_shown_escaped_on_stderr(hostile_gateway: Receiver) -> None:
    envelope = {"Status": "Failed", "Errors": [{"Field": "MessageId", "Message": TEXT}]}
    hostile_gateway.script(Answer(400, json.dumps(envelope)), Answer(400, json.dumps(envelope)))
    where = ("--base-url", hostile_gateway.url, "--username", "ops", "--auth", "basic")
    shown = test_cli.run(None, "status", *where, "--message-id", "1")
    exact = test_cli.run(None, "status", "--json", *where, "--message-id", "1")
    assert shown.returncode == exact.returncode == 1
    # The client folds the message's whitespace (its line break) into one space.
    assert shown.stderr == "gwdesk: \\x1b]0;t\\x07\\x1b[2J\\x9b2JA B\\u202eC\n"
    assert json.loads(exact.stdout)["error"]["message"] == TEXT.replace("\n", " ")
    assert hidden_in(shown.stdout + shown.stderr + exact.stdout + exact.stderr) == []


def test_a_hostile_file_name_in_an_error_is_shown_escaped(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    # A name hiding a character is refused before any request, the character named.
    name = "\u202egnp.\x9b2J.png"
    (tmp_path / name).write_bytes(b"not a picture")
    done = lodge_run(gateway, "mms", "--PhoneNumber", "0412345678", "--file", str(tmp_path / name))
    assert done.returncode == 1
    assert "'⟨U+202E⟩gnp.⟨U+009B⟩2J.png' holds U+202E RIGHT-TO-LEFT OVERRIDE" in done.stderr
    assert hidden_in(done.stdout + done.stderr) == []
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(0,)]


def test_a_hostile_csv_cell_in_a_reason_is_shown_escaped(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    sheet = tmp_path / "people\u202ecsv.txt"
    sheet.write_text("0412 345 678\n\x1b]0;t\x07\u202e0412\x9b\n", encoding="utf-8")
    done = test_cli.run(gateway, "send", "--csv", str(sheet), "Hi")
    assert done.returncode == 2
    assert "people\\u202ecsv.txt: 2 row(s)" in done.stderr
    assert "row 2: " in done.stderr
    assert hidden_in(done.stdout + done.stderr) == []


def test_argument_errors_quote_what_was_given_escaped() -> None:
    done = test_cli.run(None, "balance", "--base-url", "http://127.0.0.1:9", "\x1b]0;t\x07\u202e")
    assert done.returncode == 2
    assert "unrecognized arguments: \\x1b]0;t\\x07\\u202e" in done.stderr
    assert hidden_in(done.stderr) == []


def test_verbose_log_lines_are_escaped_too() -> None:
    script = (
        "import logging\n"
        "from gwdesk.cli import log_to_stderr\n"
        "log_to_stderr(verbose=True)\n"
        f"logging.getLogger('httpx').info('HTTP Request: %s', {TEXT!r})\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.stderr == f"httpx: HTTP Request: {TEXT_SHOWN}\n"


def test_a_refused_send_and_the_outbox_listing_show_the_gateway_reason_escaped(
    hostile_gateway: Receiver,
) -> None:
    envelope = {"Status": "Failed", "Errors": [{"Message": "No\x1b]0;t\x07\u202eway"}]}
    # The account's credits are asked first (a single send asks when they fall short):
    # refused, they are not known, and the send goes on to its refusal.
    hostile_gateway.script(Answer(400, "{}"), Answer(400, json.dumps(envelope)))
    where = ("--base-url", hostile_gateway.url, "--username", "ops", "--auth", "basic")
    sent = test_cli.run(None, "send", *where, "--to", "0412345678", "Hi")
    listed = test_cli.run(None, "outbox", *where, "--batch", "1", password=None)
    exact = test_cli.run(None, "outbox", *where, "--json", "--batch", "1", password=None)
    assert sent.returncode == 1, sent.stderr
    assert ": No\\x1b]0;t\\x07\\u202eway" in sent.stdout
    assert "request 1 failed: No\\x1b]0;t\\x07\\u202eway" in sent.stderr
    assert listed.returncode == exact.returncode == 0, listed.stderr + exact.stderr
    assert "  No\\x1b]0;t\\x07\\u202eway" in listed.stdout
    [batch] = json.loads(exact.stdout)["batches"]
    assert [e["reason"] for e in batch["entries"]] == ["No\x1b]0;t\x07\u202eway"]
    for output in (sent.stdout, sent.stderr, listed.stdout, listed.stderr, exact.stdout):
        assert hidden_in(output) == [], output
