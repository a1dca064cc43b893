"""The real `gwdesk mms|fax|wap|lodge-status` in a subprocess, against a sandbox over loopback."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.lodge_client_support import gif, messages, only_message, pdf, png, sha
from tests.contract.rest_support import set_faults
from tests.contract.test_cli import GWDESK

PASSWORD = "cli-L0dge-pw"
WAP = ("--PhoneNumber", "0412345678", "--URL", "https://e.com/")


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


def run(
    sandbox: SandboxThread, command: str, *args: str, password: str = PASSWORD
) -> subprocess.CompletedProcess[str]:
    # The data dir stays (a hermetic one per test): sends write the outbox there.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GWDESK_") or k == "GWDESK_DATA_DIR"
    }
    env["GWDESK_PASSWORD"] = password
    where = [
        "--base-url",
        sandbox.rest_url,
        "--lodge-url",
        sandbox.lodge_url,
        "--namespace",
        sandbox.config.namespace,
        "--username",
        "ops",
    ]
    return subprocess.run(
        [GWDESK, command, *where, *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_mms_sends_the_files_given_as_paths(gateway: SandboxThread, tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(png())
    (tmp_path / "anim.gif").write_bytes(gif())
    done = run(
        gateway,
        "mms",
        "--PhoneNumber=0412 345 678",
        "--MMSSubject=Photos",
        "--MMSMessageText=Two pictures",
        "--file",
        str(tmp_path / "dot.png"),
        "--file",
        str(tmp_path / "anim.gif"),
    )
    assert done.returncode == 0, done.stderr
    assert "LodgeMultiMMSMessage" in done.stdout
    row = only_message(gateway)
    assert (row["type"], row["to_number"], row["subject"]) == ("MMS", "61412345678", "Photos")
    assert [(a["file_name"], a["sha256"]) for a in row["attachments"]] == [
        ("dot.png", sha(png())),
        ("anim.gif", sha(gif())),
    ]


@pytest.mark.parametrize("port", ["soap11", "http_get"])
def test_mms_by_url_on_a_chosen_port_as_json(gateway: SandboxThread, port: str) -> None:
    done = run(
        gateway,
        "mms",
        "--json",
        "--port",
        port,
        "--PhoneNumber",
        "0412345678",
        "--URL",
        "https://example.com/clip.mp4",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result == {
        "ok": True,
        "kind": "MMS",
        "to": "0412345678",
        "operation": "LodgeMMSMessageByURL",
        "text": "Message sent successfully.",
    }
    assert only_message(gateway)["url"] == "https://example.com/clip.mp4"


def test_fax_prints_the_msgid_and_legacy_status_finds_it(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    (tmp_path / "invoice.pdf").write_bytes(pdf())
    sent = run(
        gateway,
        "fax",
        "--json",
        "--FaxNumber",
        "02 9999 8888",
        "--FaxSubject",
        "Invoice",
        "--CoverPageText",
        "Attached",
        "--file",
        str(tmp_path / "invoice.pdf"),
    )
    assert sent.returncode == 0, sent.stderr
    msg_id = json.loads(sent.stdout)["msg_id"]
    assert msg_id == only_message(gateway)["message_id"]
    status = run(gateway, "lodge-status", "--port", "http_post", "--MsgID", msg_id)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith(f"{msg_id}  61299998888  ACTIVE  lodged 20")


def test_wap_pushes_a_link(gateway: SandboxThread) -> None:
    done = run(
        gateway,
        "wap",
        "--PhoneNumber",
        "0412345678",
        "--ApplicationName",
        "Menu",
        "--URL",
        "https://example.com/menu",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("lodged WAP push to 0412345678 (LodgeWAPPush)")
    row = only_message(gateway)
    assert (row["type"], row["subject"], row["url"]) == ("WAP", "Menu", "https://example.com/menu")


def test_a_fourth_file_fails_naming_the_field_and_sends_nothing(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    paths = []
    for name in "abcd":
        (tmp_path / f"{name}.png").write_bytes(png())
        paths += ["--file", str(tmp_path / f"{name}.png")]
    done = run(gateway, "mms", "--json", "--PhoneNumber", "0412345678", *paths)
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert (error["type"], error["field"]) == ("validation", "MMSContentBase64")
    assert "At most 3 files" in done.stderr  # the Fax / MMS tab's own check and words
    assert messages(gateway) == []


def test_a_wrong_password_exits_3_without_showing_it(gateway: SandboxThread) -> None:
    wrong = "wrong-" + PASSWORD
    done = run(gateway, "wap", *WAP, password=wrong)
    assert done.returncode == 3
    assert "invalid username or password" in done.stderr
    assert wrong not in done.stdout + done.stderr


def test_an_unknown_msgid_exits_1_with_the_reason(gateway: SandboxThread) -> None:
    done = run(gateway, "lodge-status", "--MsgID", "20200101000000000000")
    assert done.returncode == 1
    assert "does not know that message" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_lost_answer_exits_4_and_says_to_check_before_resending(
    gateway: SandboxThread,
) -> None:
    set_faults(gateway, "lodge:drop_after=1")
    done = run(gateway, "wap", "--port", "http_post", *WAP)
    assert done.returncode == 4
    assert "may or may not have lodged" in done.stderr
    assert len(messages(gateway)) == 1


def test_without_a_lodge_address_it_is_a_usage_error(gateway: SandboxThread) -> None:
    # The data dir stays (a hermetic one per test): sends write the outbox there.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GWDESK_") or k == "GWDESK_DATA_DIR"
    }
    env["GWDESK_PASSWORD"] = PASSWORD
    done = subprocess.run(
        [GWDESK, "wap", "--base-url", gateway.rest_url, "--username", "ops", *WAP],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--lodge-url" in done.stderr


@pytest.mark.parametrize("port", ["http_get", "soap12"])
def test_verbose_output_never_shows_the_password(gateway: SandboxThread, port: str) -> None:
    # The GET port carries Pwd in its URL, which httpx logs at INFO.
    done = run(gateway, "wap", "-v", "--port", port, *WAP)
    assert done.returncode == 0, done.stderr
    assert "HTTP Request" in done.stderr
    assert PASSWORD not in done.stdout + done.stderr


def test_the_old_command_and_option_names_do_what_the_new_ones_do(gateway: SandboxThread) -> None:
    new = run(gateway, "lodge-status", "--MsgID", "20200101000000000000")
    env = {**os.environ, "GWDESK_PASSWORD": PASSWORD}
    old = subprocess.run(
        [GWDESK, "legacy-status", "--base-url", gateway.rest_url, "--legacy-url",
         gateway.lodge_url, "--namespace", gateway.config.namespace, "--username", "ops",
         "--MsgID", "20200101000000000000"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert (old.returncode, old.stdout) == (new.returncode, new.stdout)
    assert "error: argument" not in old.stderr
