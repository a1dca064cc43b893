"""`gwdesk send` to a list asks what the Batch tab asks, answered by flags or at a terminal.

The real entry point in a subprocess against a sandbox over loopback: a list above
1,000 recipients, the same text to the same list again, credits that do not cover
it; each refused (exit 2, naming the flag, nothing sent) when no flag answers it and
nobody is at a terminal to ask, sent when `--yes` / `--force` answers it, and asked
y/N at a terminal. Contact groups (`--group`) as the recipients.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.rest_support import endpoint_requests
from tests.contract.test_cli import GWDESK, PASSWORD, run

TO = ("--to", "0412 000 001", "--to", "0412 000 002", "--to", "0412 000 003")


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


def sheet(path: Path, count: int) -> Path:
    path.write_text("Mobile\n" + "\n".join(f"614{i:08d}" for i in range(count)) + "\n")
    return path


def sent(gateway: SandboxThread) -> int:
    """Recipients the sandbox accepted (stored before it answers)."""
    return sum(len(json.loads(r)) for (r,) in gateway.query("SELECT recipients FROM batches"))


def test_a_list_over_a_thousand_is_refused_without_yes_and_nothing_is_sent(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    done = run(gateway, "send", "--csv", str(sheet(tmp_path / "big.csv", 1001)), "Hi")
    assert done.returncode == 2
    assert "A list of 1,001 recipients is asked about first" in done.stderr
    assert "--yes sends it" in done.stderr
    assert endpoint_requests(gateway, "send") == 0


def test_yes_sends_a_list_over_a_thousand(gateway: SandboxThread, tmp_path: Path) -> None:
    big = str(sheet(tmp_path / "big.csv", 1001))
    done = run(gateway, "send", "--csv", big, "--yes", "--json", "Hi")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["lodged"] == 1001


def test_the_same_text_to_the_same_list_again_is_refused_naming_when(
    gateway: SandboxThread,
) -> None:
    first = run(gateway, "send", *TO, "--yes", "Closed on Monday")
    assert first.returncode == 0, first.stderr
    again = run(gateway, "send", *TO, "Closed on Monday")
    assert again.returncode == 2
    assert "This text was sent just now to all 3 of these recipients." in again.stderr
    assert "(--yes sends it again)" in again.stderr
    assert sent(gateway) == 3


def test_yes_sends_the_same_text_to_the_same_list_again(gateway: SandboxThread) -> None:
    run(gateway, "send", *TO, "--yes", "Closed on Monday")
    again = run(gateway, "send", *TO, "--yes", "Closed on Monday")
    assert again.returncode == 0, again.stderr
    assert sent(gateway) == 6


def test_another_text_to_the_same_list_is_asked_about_for_its_figures_only(
    gateway: SandboxThread,
) -> None:
    run(gateway, "send", *TO, "--yes", "Closed on Monday")
    other = run(gateway, "send", *TO, "Open late on Thursday")
    assert other.returncode == 2
    assert "A list of 3 recipients is asked about first" in other.stderr
    assert "This text was sent" not in other.stderr
    assert sent(gateway) == 3
    assert run(gateway, "send", *TO, "--yes", "Open late on Thursday").returncode == 0
    assert sent(gateway) == 6


def test_a_small_list_is_refused_without_yes_when_nobody_can_be_asked(
    gateway: SandboxThread,
) -> None:
    done = run(gateway, "send", *TO, "Closed on Monday")
    assert done.returncode == 2
    assert (  # at night in Sydney the send's hours are named after it: --yes answers both
        "gwdesk: A list of 3 recipients is asked about first (3 SMS parts; cost: 3 credits; "
        "9,997 credits left of 10,000); nothing was sent (--yes sends it)."
    ) in done.stderr.strip().splitlines()
    assert endpoint_requests(gateway, "send") == 0


def test_yes_sends_a_small_list(gateway: SandboxThread) -> None:
    done = run(gateway, "send", *TO, "--yes", "--json", "Closed on Monday")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["lodged"] == 3
    assert sent(gateway) == 3


def test_a_list_the_credits_do_not_cover_is_refused_unless_forced(
    gateway: SandboxThread,
) -> None:
    httpx.put(
        f"{gateway.rest_url}/sandbox/account", json={"account": "ops", "credits": 2}
    ).raise_for_status()
    refused = run(gateway, "send", *TO, "Hi")
    assert refused.returncode == 2
    assert "needs 3 credits and the account has 2; nothing was sent (--force" in refused.stderr
    assert endpoint_requests(gateway, "send") == 0
    forced = run(gateway, "send", *TO, "--force", "--yes", "Hi")
    assert forced.returncode == 0, forced.stderr


def test_a_single_number_is_not_asked_about_when_sent_again(gateway: SandboxThread) -> None:
    for _ in range(2):
        done = run(gateway, "send", "--to", "0412 000 001", "Your order is ready")
        assert done.returncode == 0, done.stderr
    assert gateway.query("SELECT COUNT(*) FROM messages") == [(2,)]


# ---- contact groups -------------------------------------------------------------------------


def contacts(gateway: SandboxThread, tmp_path: Path) -> None:
    book = tmp_path / "book.csv"
    book.write_text(
        "Name,Mobile,Groups\nAnn Lee,0412 000 001,Patients\nBo Chen,0412 000 002,Patients\n"
        "Staff Room,0412 000 009,Staff\n"
    )
    assert run(gateway, "contacts", "import", str(book)).returncode == 0


def test_a_group_is_sent_to_each_of_its_members(gateway: SandboxThread, tmp_path: Path) -> None:
    contacts(gateway, tmp_path)
    done = run(gateway, "send", "--group", "Patients", "--yes", "--json", "Closed on Monday")
    assert done.returncode == 0, done.stderr
    recipients = [json.loads(r) for (r,) in gateway.query("SELECT recipients FROM batches")]
    assert recipients == [["61412000001", "61412000002"]]


def test_a_group_takes_each_members_fields_in_a_template(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    contacts(gateway, tmp_path)
    done = run(
        gateway, "send", "--group", "Patients", "--yes", "Dear {name}, we are closed on Monday."
    )
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 20
    while len(gateway.query("SELECT message FROM messages")) < 2:
        assert time.monotonic() < deadline, "the messages were not made"
        time.sleep(0.05)
    texts = sorted(m for (m,) in gateway.query("SELECT message FROM messages"))
    assert texts == [
        "Dear Ann Lee, we are closed on Monday.",
        "Dear Bo Chen, we are closed on Monday.",
    ]


def test_a_group_send_is_refused_without_yes(gateway: SandboxThread, tmp_path: Path) -> None:
    contacts(gateway, tmp_path)
    done = run(gateway, "send", "--group", "Patients", "Closed on Monday")
    assert done.returncode == 2
    assert "A list of 2 recipients is asked about first" in done.stderr
    assert endpoint_requests(gateway, "send") == 0


def test_a_group_without_contacts_is_refused(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--group", "Nobody", "Hi")
    assert done.returncode == 2
    assert "The group 'Nobody' has no contacts" in done.stderr


def test_no_recipient_at_all_is_a_usage_error(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "Hi")
    assert done.returncode == 2
    assert "Give the recipients: --to NUMBER, --csv FILE or --group NAME." in done.stderr


# ---- at a terminal --------------------------------------------------------------------------


def at_terminal(gateway: SandboxThread, answer: str, *args: str) -> tuple[int, str]:
    """Run `gwdesk send` with stdin and stderr on a terminal; answer its question."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
    env.update(GWDESK_PASSWORD=PASSWORD, GWDESK_DATA_DIR=os.environ.get("GWDESK_DATA_DIR", ""))
    main, other = pty.openpty()
    where = ("--base-url", gateway.rest_url, "--username", "ops")
    child = subprocess.Popen(
        [GWDESK, "send", *where, *args],
        stdin=other,
        stderr=other,
        stdout=subprocess.DEVNULL,
        env={k: v for k, v in env.items() if v},
    )
    os.close(other)
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"[y/N]" not in seen:
            assert time.monotonic() < deadline, f"no question: {seen!r}"
            assert child.poll() is None, f"it ended without asking: {seen!r}"
            if select.select([main], [], [], 0.1)[0]:
                seen += os.read(main, 4096)
        os.write(main, f"{answer}\n".encode())
        code = child.wait(timeout=60)
        while select.select([main], [], [], 0.1)[0]:
            try:
                seen += os.read(main, 4096)
            except OSError:
                break
    finally:
        if child.poll() is None:
            child.kill()
        os.close(main)
    return code, seen.decode(errors="replace")


def test_at_a_terminal_the_question_is_asked_and_yes_sends(gateway: SandboxThread) -> None:
    run(gateway, "send", *TO, "--yes", "Closed on Monday")
    code, said = at_terminal(gateway, "y", *TO, "Closed on Monday")
    assert code == 0, said
    assert "This text was sent just now to all 3 of these recipients." in said
    assert "Send to 3 recipients? [y/N]" in said
    assert "Recipients: 3" in said
    assert sent(gateway) == 6


def test_at_a_terminal_no_sends_nothing(gateway: SandboxThread) -> None:
    run(gateway, "send", *TO, "--yes", "Closed on Monday")
    code, said = at_terminal(gateway, "n", *TO, "Closed on Monday")
    assert code == 2
    assert "Not sent: the answer was no (--yes sends it anyway)." in said
    assert sent(gateway) == 3


def test_at_a_terminal_a_hostile_message_is_quoted_as_plain_text(gateway: SandboxThread) -> None:
    hostile = "\x1b]0;pwned\x07\x1b[31mRed\u202eexe.pdf <b>bold</b>"
    code, said = at_terminal(gateway, "n", *TO, hostile)
    assert code == 2
    assert "\x1b" not in said
    assert "\x07" not in said
    assert "\u202e" not in said
    assert "<b>bold</b>" in said
    assert "Recipients: 3" in said
    assert sent(gateway) == 0
