"""The real `gwdesk` entry point in a subprocess, against a sandbox over loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gwdesk.domain.profile import Profile
from gwdesk.profiles import ProfileStore
from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.rest_support import endpoint_requests
from tests.unit.test_lazy_imports import imported_after

GWDESK = str(Path(sys.executable).with_name("gwdesk"))
PASSWORD = "cli-S3cret-pw"


def run(
    sandbox: SandboxThread | None,
    *args: str,
    password: str | None = PASSWORD,
    config_dir: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    # The data dir stays (a hermetic one per test): sends write the outbox there.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GWDESK_") or k == "GWDESK_DATA_DIR"
    }
    if password is not None:
        env["GWDESK_PASSWORD"] = password
    if config_dir is not None:
        env["GWDESK_CONFIG_DIR"] = str(config_dir)
    where = ["--base-url", sandbox.rest_url, "--username", "ops"] if sandbox else []
    command, *rest = args
    return subprocess.run(
        [GWDESK, command, *where, *rest],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,  # as a script runs it: nobody at a terminal to ask
    )


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


def test_send_prints_what_was_lodged(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--to", "0412 345 678", "Hello from the CLI")
    assert done.returncode == 0, done.stderr
    [(message_id, external_id)] = gateway.query(
        "SELECT message_id, external_system_id FROM messages"
    )
    assert f"MessageId {message_id}" in done.stdout
    assert external_id in done.stdout


def test_send_json_is_one_object_with_each_request(gateway: SandboxThread) -> None:
    numbers = [f"--to=614{i:08d}" for i in range(3)]
    done = run(gateway, "send", "--yes", "--json", "--external-id", "JOB-9", *numbers, "Batch")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] is True
    assert result["lodged"] == 3
    [request] = result["requests"]
    assert request["batch_code"]
    assert request["external_system_id"] == "JOB-9"


def test_csv_rows_that_are_not_numbers_stop_the_send(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,phone\nAda,0412 345 678\nBob,not known\nCy,0412 345 679\n")
    done = run(gateway, "send", "--csv", str(sheet), "Hi")
    assert done.returncode == 2
    assert "row 3: 'not known': " in done.stderr
    assert "nothing was sent" in done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(0,)]


def test_csv_with_skip_invalid_sends_to_the_good_rows(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("0412 345 678\nnot known\n0412 345 679\n")
    done = run(gateway, "send", "--csv", str(sheet), "--skip-invalid", "--yes", "--json", "Hi")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["lodged"] == 2
    assert [r["entry"] for r in result["rejected"]] == [2]
    assert "row 2: 'not known': " in done.stderr


def test_a_number_given_twice_is_sent_to_once(gateway: SandboxThread) -> None:
    done = run(
        gateway, "send", "--json", "--yes", "--to", "0412345678", "--to", "+61 412 345 678", "Once"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["duplicates"] == 1
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(1,)]


def test_unusable_numbers_stop_the_send_before_any_request(gateway: SandboxThread) -> None:
    numbers = ("--to", "0412345678", "--to", "12", "--to", "call me")
    done = run(gateway, "send", "--json", *numbers, "No")
    assert done.returncode == 2
    assert "--to #2: '12': " in done.stderr
    assert "--to #3: 'call me': " in done.stderr
    assert "2 recipient(s) are not usable; nothing was sent" in done.stderr
    assert endpoint_requests(gateway, "send") == 0


def test_skip_invalid_sends_to_the_usable_numbers_and_lists_the_rest(
    gateway: SandboxThread,
) -> None:
    numbers = ("--to", "0412345678", "--to", "12")
    done = run(gateway, "send", "--json", "--skip-invalid", "--yes", *numbers, "Some")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"] is True
    assert result["lodged"] == 1
    assert [(r["entry"], r["text"]) for r in result["rejected"]] == [(2, "12")]


def test_a_profiles_region_reads_national_numbers(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--json", "--region", "NZ", "--to", "021 234 5678", "Kia ora")
    assert done.returncode == 0, done.stderr
    assert gateway.query("SELECT to_number FROM messages") == [("64212345678",)]


def test_status_and_logs_and_balance_as_json(gateway: SandboxThread) -> None:
    sent = json.loads(run(gateway, "send", "--json", "--to", "0412345678", "Hi").stdout)
    external_id = sent["requests"][0]["external_system_id"]
    status = json.loads(run(gateway, "status", "--json", "--external-id", external_id).stdout)
    logs = json.loads(run(gateway, "logs", "--json", "--recipient", "0412 345 678").stdout)
    synced = json.loads(run(gateway, "logs", "--json", "--all").stdout)
    balance = json.loads(run(gateway, "balance", "--json").stdout)
    assert [m["PhoneNumber"] for m in status["messages"]] == ["61412345678"]
    assert logs["totalRecords"] == 1
    assert logs["messages"][0]["message"] == "Hi"
    assert [m["messageId"] for m in synced["messages"]] == [
        m["messageId"] for m in logs["messages"]
    ]
    assert (balance["source"], balance["AccountType"]) == ("account_info", "Prepaid")


def test_balance_shows_the_credits_and_names_account_info_as_their_source(
    gateway: SandboxThread,
) -> None:
    done = run(gateway, "balance")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Credits 10,000 (Account/Info, prepaid)\n"


def test_balance_without_account_info_shows_the_balance_endpoint_and_says_why(
    sandbox_factory: SandboxFactory,
) -> None:
    gateway = sandbox_factory(extra_accounts=[("ops", PASSWORD)], faults="account_info:404=1")
    text = run(gateway, "balance")
    as_json = json.loads(run(gateway, "balance", "--json").stdout)
    assert text.stdout == "Balance 1,000.00 AUD, 10,000 credits (account balance)\n"
    assert "This gateway has no GET /v2/Account/Info (HTTP 404)." in text.stderr
    assert (as_json["source"], as_json["Currency"], as_json["MessageCredits"]) == (
        "balance",
        "AUD",
        10_000,
    )
    assert as_json["summary"] == text.stdout.strip()


def test_an_unknown_message_id_fails_with_the_reason_and_no_traceback(
    gateway: SandboxThread,
) -> None:
    done = run(gateway, "status", "--message-id", "20200101000000000000")
    assert done.returncode == 1
    assert "No message has MessageId" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_wrong_password_exits_3_and_never_shows_a_password(gateway: SandboxThread) -> None:
    wrong = "wrong-" + PASSWORD
    done = run(gateway, "balance", "--json", password=wrong)
    assert done.returncode == 3
    assert "user name or password" in done.stderr
    assert json.loads(done.stdout)["error"]["type"] == "authentication"
    for stream in (done.stdout, done.stderr):
        assert PASSWORD not in stream


def test_the_password_never_appears_in_normal_output(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--json", "-v", "--to", "0412345678", "Hi")
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr


def test_a_missing_password_is_a_usage_error(gateway: SandboxThread) -> None:
    done = run(gateway, "balance", password=None)
    assert done.returncode == 2
    assert "GWDESK_PASSWORD" in done.stderr


def test_a_saved_profile_is_used_by_name(gateway: SandboxThread, tmp_path: Path) -> None:
    ProfileStore(tmp_path).save(Profile(name="local", rest_url=gateway.rest_url, username="ops"))
    done = run(None, "balance", "--profile", "local", config_dir=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Credits ")


def test_without_a_console_no_arguments_exits_2_with_a_message() -> None:
    # `None` in sys.modules makes the console's import fail, whether or not it exists yet.
    script = (
        "import sys; sys.modules['gwdesk.ui.app'] = None; "
        "from gwdesk.launcher import main; sys.exit(main([]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "the console cannot start" in done.stderr


def test_the_commands_alone_never_import_the_console_or_the_launcher() -> None:
    statement = "from gwdesk.cli import build_parser; build_parser()"
    assert imported_after(statement, ("gwdesk.ui", "gwdesk.launcher", "PySide6")) == []


def test_commands_without_a_command_print_their_usage_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gwdesk.cli"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("usage: gwdesk")


def test_version() -> None:
    done = subprocess.run([GWDESK, "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.startswith("gwdesk ")
