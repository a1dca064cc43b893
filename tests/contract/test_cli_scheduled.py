"""`gwdesk send --at` and `gwdesk scheduled`, the real entry point in a subprocess against a
sandbox: a send is held until its time, listed, changed, sent now, cancelled, or sent
by `run` when due; refusals change nothing; hostile text is printed escaped.

Time is the machine's: a send is scheduled an hour ahead, and one is made due as a
console that was closed would find it, by writing its `held_until_us` in the past in
the profile's file."""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gwdesk.paths import AppPaths
from gwdesk.sandbox.server import SandboxThread
from tests.contract import test_cli
from tests.contract.test_cli_hostile_text import TEXT, TEXT_SHOWN, hidden_in
from tests.hours_support import inside_sending_hours

NUMBERS = ("0412000101", "0412000102", "0412000103")
E164 = tuple(f"61{n[1:]}" for n in NUMBERS)
SHOWN = ("+61 412 000 101", "+61 412 000 102", "+61 412 000 103")
HOSTILE = "<b>Sale</b> \x1b[31mred\x1b[0m \u202eevil\nsecond line"
HOSTILE_SHOWN = "<b>Sale</b> \\x1b[31mred\\x1b[0m \\u202eevil\\nsecond line"


@pytest.fixture
def gateway(sandbox_factory: test_cli.SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", test_cli.PASSWORD)])


def run(gateway: SandboxThread, *args: str) -> subprocess.CompletedProcess[str]:
    return test_cli.run(gateway, *args)


def data(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def in_an_hour() -> datetime:
    """A time at least an hour ahead inside the sending hours in Sydney (the profile's
    zone), so that no send is held back for them whatever the time of day the tests run."""
    return inside_sending_hours(ZoneInfo("Australia/Sydney"))


def schedule(gateway: SandboxThread, text: str, *numbers: str, at: datetime | None = None) -> int:
    """A send to `numbers` (all of `NUMBERS` by default) held until `at` (in an hour)."""
    to = [f"--to={n}" for n in numbers or NUMBERS]
    when = (at or in_an_hour()).isoformat()
    done = run(gateway, "send", "--json", "--yes", "--at", when, *to, text)
    scheduled: int = data(done)["scheduled"]["id"]
    return scheduled


def listed(gateway: SandboxThread) -> list[dict[str, Any]]:
    """The held sends `scheduled list --json` shows (without how far ahead each is, which
    changes as the test runs)."""
    found: list[dict[str, Any]] = data(run(gateway, "scheduled", "list", "--json"))["scheduled"]
    return [{k: v for k, v in held.items() if k != "in_seconds"} for held in found]


def lodged(gateway: SandboxThread, text: str) -> list[str]:
    """The numbers the sandbox was asked to text `text`, in order."""
    rows = gateway.query("SELECT to_number FROM messages WHERE message = ? ORDER BY id", (text,))
    return [str(row[0]) for row in rows]


def lodged_count(gateway: SandboxThread) -> int:
    return int(gateway.query("SELECT COUNT(*) FROM messages")[0][0])


def profile_file() -> Path:
    """The store an inline gateway's commands use (profile "command line")."""
    return AppPaths.default().profile_db("command_line")


def move_hold(batch_id: int, ago: timedelta) -> None:
    """Make a held send due `ago` in the past, as a console closed meanwhile finds it."""
    due_us = int((datetime.now(UTC) - ago).timestamp() * 1_000_000)
    with sqlite3.connect(profile_file()) as db:
        db.execute("UPDATE outbox_batches SET held_until_us = ? WHERE id = ?", (due_us, batch_id))


def batches_recorded() -> int:
    if not profile_file().exists():
        return 0
    with sqlite3.connect(profile_file()) as db:
        return int(db.execute("SELECT COUNT(*) FROM outbox_batches").fetchone()[0])


# ---- scheduling ---------------------------------------------------------------------------


def test_send_at_holds_the_send_and_says_what_must_run_then(gateway: SandboxThread) -> None:
    at = in_an_hour()
    done = run(gateway, "send", "--yes", "--at", at.isoformat(), *[f"--to={n}" for n in NUMBERS],
               "Clinic opens at ten")  # fmt: skip
    assert done.returncode == 0, done.stderr
    [first, running, _] = done.stdout.splitlines()
    assert first.startswith("scheduled send #")
    assert "3 recipients" in first
    assert f"{at:%Y-%m-%d %H:%M:%S} UTC" in first
    assert "console or `gwdesk scheduled run` is running" in running
    assert lodged_count(gateway) == 0


def test_list_json_shows_the_scheduled_send(gateway: SandboxThread) -> None:
    at = in_an_hour()
    batch_id = schedule(gateway, "Clinic opens at ten", at=at)
    [held] = listed(gateway)
    assert held["id"] == batch_id
    assert datetime.fromisoformat(held["due_utc"]) == at
    assert datetime.fromisoformat(held["due"]) == at  # the operator's zone, the same moment
    assert (held["recipients"], held["numbers"]) == (3, list(E164))
    assert held["text"] == "Clinic opens at ten"


def test_list_prints_one_line_per_send_soonest_first(gateway: SandboxThread) -> None:
    later = schedule(gateway, "Later", *NUMBERS, "0412000104", at=in_an_hour() + timedelta(hours=2))
    sooner = schedule(gateway, "Sooner", NUMBERS[0])
    done = run(gateway, "scheduled")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert f")  #{sooner}  1 recipient: +61 412 000 101" in first
    assert " (in " in first
    assert first.endswith("  Sooner")
    assert f"#{later}  4 recipients: {', '.join(SHOWN)}, and 1 more" in second
    assert second.endswith("  Later")


def test_list_says_so_when_nothing_is_scheduled(gateway: SandboxThread) -> None:
    done = run(gateway, "scheduled", "list")
    assert (done.returncode, done.stdout) == (0, "No send is scheduled on this account.\n")


def test_a_single_number_is_scheduled_without_the_list_question(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--json", "--at", in_an_hour().isoformat(), "--to", NUMBERS[0],
               "Just one")  # fmt: skip
    assert data(done)["scheduled"]["numbers"] == [E164[0]]
    assert lodged_count(gateway) == 0


def test_show_prints_every_recipient(gateway: SandboxThread) -> None:
    many = [f"04120002{i:02d}" for i in range(10)]
    batch_id = schedule(gateway, "To ten", *many)
    done = run(gateway, "scheduled", "show", str(batch_id))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"scheduled send #{batch_id}"
    assert "  recipients: 10" in done.stdout
    assert [line.strip() for line in done.stdout.splitlines()[-10:]] == [
        f"+61 412 000 2{i:02d}" for i in range(10)
    ]


# ---- changing, sending now, cancelling ------------------------------------------------------


def test_an_edited_text_sent_now_lodges_the_edited_text_once(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Clinic opens at ten")
    edited = run(gateway, "scheduled", "edit", str(batch_id), "--text", "Clinic opens at eleven")
    assert edited.returncode == 0, edited.stderr
    assert "  text:       Clinic opens at eleven" in edited.stdout
    sent = run(gateway, "scheduled", "send-now", str(batch_id), "--yes", "--json")
    assert data(sent)["lodged"] == 3
    assert lodged(gateway, "Clinic opens at eleven") == list(E164)
    assert lodged(gateway, "Clinic opens at ten") == []
    assert listed(gateway) == []
    again = run(gateway, "scheduled", "send-now", str(batch_id), "--yes")
    assert again.returncode == 1
    assert "no longer waiting" in again.stderr
    assert lodged_count(gateway) == 3


def test_send_now_prints_the_outcome_as_send_does(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Right away", NUMBERS[0])
    done = run(gateway, "scheduled", "send-now", str(batch_id), "--yes")
    assert done.returncode == 0, done.stderr
    [(message_id,)] = gateway.query("SELECT message_id FROM messages")
    assert f"lodged {E164[0]}: MessageId {message_id}" in done.stdout


def test_a_cancelled_send_lodges_nothing(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Sale starts Friday")
    done = run(gateway, "scheduled", "cancel", str(batch_id), "--yes")
    assert done.returncode == 0, done.stderr
    assert f"cancelled send #{batch_id}" in done.stdout
    assert listed(gateway) == []
    assert run(gateway, "scheduled", "run").returncode == 0
    assert lodged_count(gateway) == 0


def test_edited_recipients_are_who_it_goes_to(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Recipients changed")
    done = run(gateway, "scheduled", "edit", str(batch_id), "--json",
               "--to", "0412000201,0412000202", "--to", "0412000203")  # fmt: skip
    assert data(done)["scheduled"]["numbers"] == ["61412000201", "61412000202", "61412000203"]
    assert run(gateway, "scheduled", "send-now", str(batch_id), "--yes").returncode == 0
    assert lodged(gateway, "Recipients changed") == ["61412000201", "61412000202", "61412000203"]


def test_recipients_from_a_file_are_read_as_send_reads_them(
    gateway: SandboxThread, tmp_path: Path
) -> None:
    batch_id = schedule(gateway, "From a file")
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,mobile\nAda,0412 000 301\nBob,+61412000302\n", encoding="utf-8")
    done = run(gateway, "scheduled", "edit", str(batch_id), "--to-file", str(sheet), "--json")
    assert data(done)["scheduled"]["numbers"] == ["61412000301", "61412000302"]


def test_an_edited_time_without_an_offset_is_the_operators_local_time(
    gateway: SandboxThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    batch_id = schedule(gateway, "Moved")
    zone = ZoneInfo("Asia/Kolkata")  # UTC+05:30 all year
    local = (datetime.now(zone) + timedelta(hours=3)).replace(second=0, microsecond=0)
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # the operator's zone, as the command sees it
    done = run(gateway, "scheduled", "edit", str(batch_id), "--json",
               "--at", local.replace(tzinfo=None).isoformat())  # fmt: skip
    held = data(done)["scheduled"]
    assert datetime.fromisoformat(held["due_utc"]) == local.astimezone(UTC)
    assert held["due"].endswith("+05:30")


# ---- run: what is due, once; the missed left waiting -------------------------------------


def test_run_sends_a_due_send_and_leaves_a_missed_one_waiting(gateway: SandboxThread) -> None:
    due = schedule(gateway, "Due now")
    missed = schedule(gateway, "Missed", NUMBERS[0])
    move_hold(due, timedelta(seconds=30))
    move_hold(missed, timedelta(hours=1))
    done = run(gateway, "scheduled", "run")
    assert done.returncode == 0, done.stderr
    assert f"send #{due}:" in done.stdout
    assert any(
        line.startswith("missed, left waiting: ") and f"#{missed}" in line
        for line in done.stdout.splitlines()
    )
    assert "gwdesk scheduled run --missed" in done.stderr
    assert lodged(gateway, "Due now") == list(E164)
    assert lodged(gateway, "Missed") == []
    assert [s["id"] for s in listed(gateway)] == [missed]
    assert data(run(gateway, "scheduled", "run", "--json"))["sent"] == []
    assert lodged_count(gateway) == 3


def test_run_with_missed_sends_the_missed_one(gateway: SandboxThread) -> None:
    missed = schedule(gateway, "Late but wanted", NUMBERS[0])
    move_hold(missed, timedelta(hours=1))
    report = data(run(gateway, "scheduled", "run", "--missed", "--json"))
    assert [(s["id"], s["lodged"]) for s in report["sent"]] == [(missed, 1)]
    assert lodged(gateway, "Late but wanted") == [E164[0]]


def test_run_with_nothing_due_says_so_and_sends_nothing(gateway: SandboxThread) -> None:
    schedule(gateway, "Not yet")
    done = run(gateway, "scheduled", "run")
    assert (done.returncode, done.stdout) == (0, "Nothing is due.\n")
    assert lodged_count(gateway) == 0


# ---- hostile text -------------------------------------------------------------------------


def test_hostile_text_is_printed_escaped_on_one_line(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, HOSTILE, NUMBERS[0])
    listing = run(gateway, "scheduled")
    [line] = listing.stdout.splitlines()
    assert line.endswith(f"  {HOSTILE_SHOWN}")
    shown = run(gateway, "scheduled", "show", str(batch_id))
    assert f"  text:       {HOSTILE_SHOWN}" in shown.stdout.splitlines()
    assert hidden_in(listing.stdout + shown.stdout + shown.stderr) == []
    as_json = run(gateway, "scheduled", "show", str(batch_id), "--json")
    assert data(as_json)["scheduled"]["text"] == HOSTILE
    assert hidden_in(as_json.stdout) == []


def test_a_hostile_edit_is_kept_exactly_and_shown_escaped(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Plain", NUMBERS[0])
    done = run(gateway, "scheduled", "edit", str(batch_id), "--text", TEXT)
    assert done.returncode == 0, done.stderr
    assert f"  text:       {TEXT_SHOWN}" in done.stdout.splitlines()
    assert hidden_in(done.stdout + done.stderr) == []
    [held] = listed(gateway)
    assert held["text"] == TEXT


def test_a_long_text_is_listed_by_its_start(gateway: SandboxThread) -> None:
    schedule(gateway, "\u202e" + "Long " * 20, NUMBERS[0])
    [line] = run(gateway, "scheduled").stdout.splitlines()
    assert line.endswith("  \\u202e" + ("Long " * 10)[:46] + "…")


# ---- refusals: a clear line, nothing changed --------------------------------------------


@pytest.mark.parametrize(
    ("at", "says"),
    [
        (timedelta(minutes=-5), "That time has passed"),
        (timedelta(days=400), "up to a year ahead"),
    ],
    ids=["past", "beyond-a-year"],
)
def test_a_time_that_cannot_be_kept_is_refused_and_nothing_recorded(
    gateway: SandboxThread, at: timedelta, says: str
) -> None:
    when = (datetime.now(UTC) + at).isoformat()
    done = run(gateway, "send", "--yes", "--at", when, "--to", NUMBERS[0], "--to", NUMBERS[1],
               "Never")  # fmt: skip
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert says in line
    assert batches_recorded() == 0
    assert lodged_count(gateway) == 0


def test_at_and_send_at_together_are_refused(gateway: SandboxThread) -> None:
    when = in_an_hour().isoformat()
    done = run(gateway, "send", "--at", when, "--send-at", when, "--to", NUMBERS[0], "Both")
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
    assert batches_recorded() == 0


def test_a_list_scheduled_without_an_answer_is_refused_and_nothing_recorded(
    gateway: SandboxThread,
) -> None:
    done = run(gateway, "send", "--at", in_an_hour().isoformat(),
               *[f"--to={n}" for n in NUMBERS], "Unasked")  # fmt: skip
    assert done.returncode == 2
    assert "--yes sends it" in done.stderr
    assert batches_recorded() == 0


def test_personal_messages_are_not_scheduled(gateway: SandboxThread, tmp_path: Path) -> None:
    sheet = tmp_path / "people.csv"
    sheet.write_text("name,mobile\nAda,0412000301\n", encoding="utf-8")
    done = run(gateway, "send", "--yes", "--at", in_an_hour().isoformat(),
               "--csv", str(sheet), "Hi {name}")  # fmt: skip
    assert done.returncode == 2
    assert "one text for every recipient" in done.stderr
    assert batches_recorded() == 0


@pytest.mark.parametrize(
    "args",
    [
        ("edit", "999", "--text", "x"),
        ("show", "999"),
        ("cancel", "999", "--yes"),
        ("send-now", "999", "--yes"),
    ],
    ids=lambda a: a[0],
)
def test_an_unknown_id_is_refused(gateway: SandboxThread, args: tuple[str, ...]) -> None:
    done = run(gateway, "scheduled", *args)
    assert done.returncode == 1
    assert done.stderr == "gwdesk: No send #999 is scheduled on this account.\n"


@pytest.mark.parametrize("given", ["9" * 40, "-1", "\u0663", "#3", "\x1b[2J"])
def test_an_id_that_is_no_id_is_a_usage_error(gateway: SandboxThread, given: str) -> None:
    done = run(gateway, "scheduled", "show", given)
    assert done.returncode == 2
    assert "a send's id as `gwdesk scheduled list` shows it" in done.stderr
    assert hidden_in(done.stderr) == []


def test_a_cancelled_send_is_no_longer_waiting(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Cancelled once", NUMBERS[0])
    assert run(gateway, "scheduled", "cancel", str(batch_id), "--yes").returncode == 0
    done = run(gateway, "scheduled", "edit", str(batch_id), "--text", "Back?", "--json")
    assert done.returncode == 1
    assert "no longer waiting" in json.loads(done.stdout)["error"]["message"]
    assert lodged_count(gateway) == 0


def test_an_empty_text_is_refused_and_nothing_changes(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Keep me")
    before = listed(gateway)
    done = run(gateway, "scheduled", "edit", str(batch_id), "--text", "   ",
               "--to", "0412000999", "--at", (in_an_hour() + timedelta(hours=1)).isoformat())  # fmt: skip
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert listed(gateway) == before


def test_a_time_refused_in_an_edit_changes_nothing(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Keep my time")
    before = listed(gateway)
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    done = run(gateway, "scheduled", "edit", str(batch_id), "--text", "New", "--at", past)
    assert done.returncode == 1
    assert "That time has passed" in done.stderr
    assert listed(gateway) == before


def test_an_unusable_new_recipient_refuses_the_edit(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Keep my recipients")
    before = listed(gateway)
    done = run(gateway, "scheduled", "edit", str(batch_id), "--to", "0412000201,not-a-number")
    assert done.returncode == 2
    assert "--skip-invalid" in done.stderr
    assert listed(gateway) == before


def test_an_edit_that_changes_nothing_is_a_usage_error(gateway: SandboxThread) -> None:
    batch_id = schedule(gateway, "Unchanged")
    done = run(gateway, "scheduled", "edit", str(batch_id))
    assert done.returncode == 2
    assert "Say what to change" in done.stderr


def test_cancel_without_a_terminal_or_yes_is_refused_and_keeps_the_send(
    gateway: SandboxThread,
) -> None:
    batch_id = schedule(gateway, "Still here")
    done = run(gateway, "scheduled", "cancel", str(batch_id))
    assert done.returncode == 2
    assert "nothing was cancelled (--yes answers yes)" in done.stderr
    assert [s["id"] for s in listed(gateway)] == [batch_id]


# ---- asked at a terminal ------------------------------------------------------------------


@pytest.fixture
def terminal() -> Iterator[tuple[int, int]]:
    """A pseudo-terminal: the command's stdin, and where the test types."""
    typed, stdin = pty.openpty()
    yield typed, stdin
    os.close(typed)
    os.close(stdin)


def at_terminal(
    gateway: SandboxThread, terminal: tuple[int, int], answer: str, *args: str
) -> subprocess.CompletedProcess[str]:
    typed, stdin = terminal
    os.write(typed, answer.encode() + b"\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
    env |= {"GWDESK_PASSWORD": test_cli.PASSWORD, "GWDESK_DATA_DIR": os.environ["GWDESK_DATA_DIR"]}
    where = ["--base-url", gateway.rest_url, "--username", "ops"]
    return subprocess.run(
        [test_cli.GWDESK, "scheduled", *where, *args],
        capture_output=True, stdin=stdin, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip


def test_cancel_at_a_terminal_answered_no_keeps_the_send(
    gateway: SandboxThread, terminal: tuple[int, int]
) -> None:
    batch_id = schedule(gateway, "Asked about")
    done = at_terminal(gateway, terminal, "n", "cancel", str(batch_id))
    assert done.returncode == 2
    assert f"Cancel send #{batch_id}? [y/N]" in done.stderr
    assert "The answer was no: nothing was cancelled." in done.stderr
    assert [s["id"] for s in listed(gateway)] == [batch_id]


def test_send_now_at_a_terminal_answered_yes_lodges_it(
    gateway: SandboxThread, terminal: tuple[int, int]
) -> None:
    batch_id = schedule(gateway, "Asked and sent", NUMBERS[0])
    done = at_terminal(gateway, terminal, "y", "send-now", str(batch_id))
    assert done.returncode == 0, done.stderr
    assert f"Send #{batch_id} now? [y/N]" in done.stderr
    assert lodged(gateway, "Asked and sent") == [E164[0]]


def test_every_schedules_a_recurring_send_shown_with_its_rule(gateway: SandboxThread) -> None:
    at = in_an_hour()
    done = run(gateway, "send", "--json", "--at", at.isoformat(), "--every", "weekly",
               "--until", "2099-01-01", "--to", NUMBERS[0], "Weekly reminder")  # fmt: skip
    assert done.returncode == 0, done.stderr
    every = data(done)["scheduled"]["every"]
    day = at.astimezone(ZoneInfo("Australia/Sydney"))
    assert every == f"every {day:%A} at 10:00 Australia/Sydney until 2099-01-01"
    [held] = listed(gateway)
    assert held["every"] == every


def test_until_without_every_is_refused_and_nothing_is_recorded(gateway: SandboxThread) -> None:
    done = run(gateway, "send", "--at", in_an_hour().isoformat(), "--until", "2099-01-01",
               "--to", NUMBERS[0], "No rule")  # fmt: skip
    assert done.returncode == 2
    assert "--until goes with --every" in done.stderr
    assert batches_recorded() == 0


def test_quiet_hours_ignore_schedules_at_the_time_given_outside_the_hours(
    gateway: SandboxThread,
) -> None:
    night = in_an_hour() + timedelta(hours=13)  # 23:00 in Sydney: outside the hours
    kept = data(run(gateway, "send", "--json", "--at", night.isoformat(), "--to", NUMBERS[0],
                    "Kept to the hours"))["scheduled"]  # fmt: skip
    assert datetime.fromisoformat(kept["due_utc"]) > night  # waits for 08:00
    ignored = data(run(gateway, "send", "--json", "--at", night.isoformat(), "--to", NUMBERS[1],
                       "--quiet-hours", "ignore", "At night"))["scheduled"]  # fmt: skip
    assert datetime.fromisoformat(ignored["due_utc"]) == night


def test_the_outbox_listing_shows_a_waiting_send_as_held_with_its_time(
    gateway: SandboxThread,
) -> None:
    at = in_an_hour()
    batch_id = schedule(gateway, "Held in the outbox")
    [shown] = data(run(gateway, "outbox", "--json"))["batches"]
    assert shown["batch"] == batch_id
    assert datetime.fromisoformat(shown["held_until"]) == at
    listing = run(gateway, "outbox")
    assert f"batch {batch_id:<5} held" in listing.stdout
