"""`gwdesk templates`, `gwdesk contacts` and `gwdesk send --template` / `--dry-run`, run as
the real entry point in a subprocess against a sandbox over loopback."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from gwdesk.sandbox.server import SandboxThread
from tests.conftest import SandboxFactory
from tests.contract.test_cli import PASSWORD, run


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


def sheet(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "patients.csv"
    path.write_text(text, encoding="utf-8")
    return path


PATIENTS = (
    "First name,Mobile,Clinic\n"
    "Ann,0412 000 001,Glebe\n"
    "Zoë,0412 000 002,Bondi\n"
    "Ben,0412 000 003,\n"
    "Kim,0412 000 004,Glebe\n"
)
TEMPLATE = "Hi {first name}, see you at {clinic}."


def sent_texts(gateway: SandboxThread) -> dict[str, str]:
    return dict(gateway.query("SELECT to_number, message FROM messages"))


# ---- templates ---------------------------------------------------------------------------


def test_a_template_added_is_listed_and_shown_with_its_fields(gateway: SandboxThread) -> None:
    added = run(gateway, "templates", "add", "Check-up", TEMPLATE)
    assert added.returncode == 0, added.stderr
    listed = run(gateway, "templates", "--json")
    [kept] = json.loads(listed.stdout)["templates"]
    assert (kept["name"], kept["placeholders"]) == ("Check-up", ["{first name}", "{clinic}"])
    shown = run(gateway, "templates", "show", "check-up")
    assert shown.stdout.splitlines() == ["Check-up:", TEMPLATE, "fields: {first name}, {clinic}"]


def test_a_template_with_an_unclosed_brace_is_refused_with_its_position(
    gateway: SandboxThread,
) -> None:
    done = run(gateway, "templates", "add", "Broken", "Hi {first name, see you")
    assert done.returncode == 2
    assert "never closed" in done.stderr
    assert "(character 4)" in done.stderr
    assert json.loads(run(gateway, "templates", "--json").stdout)["templates"] == []


def test_removing_a_template_that_is_not_kept_fails(gateway: SandboxThread) -> None:
    done = run(gateway, "templates", "remove", "nothing")
    assert done.returncode == 1
    assert "no template called 'nothing'" in done.stderr


# ---- contacts ----------------------------------------------------------------------------


def test_contacts_import_reports_what_it_added_and_what_it_left_out(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    book = sheet(tmp_path, "Name,Mobile,Groups\nAnn,0412 000 001,Patients\nBad,12,\n")
    done = run(gateway, "contacts", "import", str(book), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["added"], report["updated"]) == (1, 0)
    assert report["invalid"][0]["row"] == 3
    again = json.loads(run(gateway, "contacts", "import", str(book), "--json").stdout)
    assert (again["added"], again["updated"]) == (0, 1)


def test_contacts_list_shows_a_number_that_opted_out(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    run(gateway, "contacts", "import", str(sheet(tmp_path, "Name,Mobile\nAnn,0412 000 001\n")))
    run(gateway, "optouts", "add", "0412 000 001", "--reason", "asked by phone")
    listed = run(gateway, "contacts", "list")
    assert listed.stdout.splitlines()[0] == "Ann  +61 412 000 001 (opted out)"


def test_contacts_export_writes_no_cell_a_spreadsheet_would_run(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    book = sheet(tmp_path, "Name,Mobile\n\"=cmd|' /C calc'!A0\",0412 000 001\n")
    run(gateway, "contacts", "import", str(book))
    out = tmp_path / "export.csv"
    done = run(gateway, "contacts", "export", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8-sig").splitlines()[1].startswith("\"'=cmd|")


# ---- send --------------------------------------------------------------------------------


def test_a_dry_run_prints_every_rendered_message_and_the_totals_and_sends_nothing(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    done = run(gateway, "send", "--csv", str(sheet(tmp_path, PATIENTS)), TEMPLATE, "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:3] == [
        "row 2, +61 412 000 001 (1 part, GSM-7): Hi Ann, see you at Glebe.",
        "row 3, +61 412 000 002 (1 part, UCS-2): Hi Zoë, see you at Bondi.",
        "row 5, +61 412 000 004 (1 part, GSM-7): Hi Kim, see you at Glebe.",
    ]
    assert "3 message(s), 1 part(s) each, 3 part(s) in all, in 3 request(s)" in lines[3]
    assert "  row 3, 61412000002: {first name} 'Zoë' has ë" in lines
    assert "  row 4, '61412000003': no value for {clinic}" in lines
    assert lines[-2].startswith("cost: 3 part(s), 3 credit(s) of the ")
    assert lines[-1] == "dry run: nothing was sent"
    assert sent_texts(gateway) == {}


def test_a_dry_run_shows_an_invisible_character_of_a_value_as_an_escape(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    book = sheet(tmp_path, "First name,Mobile,Clinic\nAnn\u200bLee,0412 000 001,Glebe\n")
    shown = run(gateway, "send", "--csv", str(book), TEMPLATE, "--dry-run")
    assert "\u200b" not in shown.stdout
    assert "Hi Ann\\u200bLee, see you at Glebe." in shown.stdout
    exact = run(gateway, "send", "--csv", str(book), TEMPLATE, "--dry-run", "--json")
    assert "\u200b" not in exact.stdout
    assert json.loads(exact.stdout)["messages"][0]["text"] == "Hi Ann\u200bLee, see you at Glebe."


def test_a_value_that_would_reverse_the_text_makes_its_row_invalid(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    book = sheet(tmp_path, "First name,Mobile,Clinic\nAnn\u202eevil,0412 000 001,Glebe\n")
    done = run(gateway, "send", "--csv", str(book), TEMPLATE, "--dry-run", "--json")
    [row] = json.loads(done.stdout)["invalid"]
    assert row["reason"].startswith("its {first name} holds U+202E RIGHT-TO-LEFT OVERRIDE")
    assert "\u202e" not in done.stdout


def test_a_saved_template_sends_each_row_its_own_text(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    run(gateway, "templates", "add", "Check-up", TEMPLATE)
    done = run(
        gateway, "send", "--csv", str(sheet(tmp_path, PATIENTS)), "--template", "check-up",
        "--skip-invalid", "--yes", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["lodged"], len(result["requests"])) == (3, 3)
    assert result["rejected"][0]["reason"] == "no value for {clinic}"
    assert sent_texts(gateway) == {
        "61412000001": "Hi Ann, see you at Glebe.",
        "61412000002": "Hi Zoë, see you at Bondi.",
        "61412000004": "Hi Kim, see you at Glebe.",
    }


def test_rows_that_cannot_be_sent_to_stop_the_send(gateway: SandboxThread, tmp_path: Path) -> None:
    done = run(gateway, "send", "--csv", str(sheet(tmp_path, PATIENTS)), TEMPLATE)
    assert done.returncode == 2
    assert "1 recipient(s) cannot be sent to; nothing was sent" in done.stderr
    assert sent_texts(gateway) == {}


def test_a_send_the_credits_do_not_cover_is_refused_unless_forced(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    httpx.put(
        f"{gateway.rest_url}/sandbox/account", json={"account": "ops", "credits": 2}
    ).raise_for_status()
    book = str(sheet(tmp_path, PATIENTS))
    refused = run(gateway, "send", "--csv", book, TEMPLATE, "--skip-invalid")
    assert refused.returncode == 2
    assert "needs 3 credits and the account has 2" in refused.stderr
    assert sent_texts(gateway) == {}
    forced = run(gateway, "send", "--csv", book, TEMPLATE, "--skip-invalid", "--force", "--yes")
    assert forced.returncode == 0, forced.stderr
    assert len(sent_texts(gateway)) == 3


def test_a_message_with_a_brace_left_open_is_refused_with_its_position(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    done = run(gateway, "send", "--csv", str(sheet(tmp_path, PATIENTS)), "Hi {first name")
    assert done.returncode == 2
    assert "MESSAGE cannot be read as a template" in done.stderr
    assert "(character 4)" in done.stderr


def test_to_numbers_take_the_fields_of_their_contacts(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    book = sheet(tmp_path, "Name,Mobile,Clinic\nAnn Lee,0412 000 001,Glebe\n")
    run(gateway, "contacts", "import", str(book))
    run(gateway, "templates", "add", "Hello", "Dear {name}, {clinic} is open late.")
    done = run(gateway, "send", "--to", "0412 000 001", "--template", "Hello", "--yes")
    assert done.returncode == 0, done.stderr
    assert sent_texts(gateway) == {"61412000001": "Dear Ann Lee, Glebe is open late."}


def test_a_personal_send_without_yes_is_refused_naming_its_figures(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    run(gateway, "templates", "add", "Hello", "Dear {name|patient}, we are open late.")
    done = run(
        gateway, "send", "--to", "0412 000 001", "--to", "0412 000 002", "--template", "Hello"
    )
    assert done.returncode == 2
    assert (
        "A list of 2 recipients is asked about first (2 SMS parts; cost: 2 credits; 9,998 "
        "credits left of 10,000); nothing was sent (--yes sends it)."
    ) in done.stderr
    assert sent_texts(gateway) == {}


def test_a_plain_message_to_numbers_keeps_its_braces(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--to", "0412 000 001", "Your code is {ABC}")
    assert done.returncode == 0, done.stderr
    assert sent_texts(gateway) == {"61412000001": "Your code is {ABC}"}
