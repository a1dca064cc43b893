"""The team's record, as the server keeps it: tried as a hostile or careless colleague would,
with a plain psycopg connection logged in as an operator's own login (no gwdesk code in
between), then through gwdesk itself.

The office is set up as `docs/team.md` says: an owner who ran `team init`, Alex and Sam
each with a login of their own, the receiver with its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from gwdesk.app.catch_up import ReplyCatchUp
from gwdesk.app.optouts import check_rules, save_rules
from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.sms import SmsForm
from gwdesk.domain.optout_words import Keywords
from gwdesk.domain.profile import Profile
from gwdesk.domain.settings import DEFAULT_INSTRUCTION
from gwdesk.replies.template import ReplyTemplate
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.optouts import OptOutError
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply, OptOutRules, ReplyStore
from gwdesk.store.shared import ServerData
from gwdesk.store.team import Presence
from tests.contract.listener_support import listen_processes
from tests.contract.rest_support import service_for
from tests.postgres_server import PostgresServer
from tests.team.logins import OfficeLogins, office_logins

GWDESK = str(Path(sys.executable).with_name("gwdesk"))
NUMBER = "61412345678"
"""Opted out by the customer's own STOP, stored by the receiver."""
T0 = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


@dataclass
class Office:
    logins: OfficeLogins
    account: str
    stop_reply: int
    """The id of the customer's stored STOP."""

    def connect(self, who: str) -> psycopg.Connection[Any]:
        """A plain client, logged in as `who` (a display name, or `owner`)."""
        return psycopg.connect(self.logins.login(who), autocommit=True)

    def superuser(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.logins.url, autocommit=True)

    def opted_out(self) -> bool:
        with self.superuser() as conn:
            row = conn.execute(
                "SELECT opted_out FROM optouts WHERE account = %s AND number = %s",
                (self.account, NUMBER),
            ).fetchone()
        return row is not None and row[0] == 1

    def record(self) -> tuple[list[Any], ...]:
        """Everything of the record, as the server holds it."""
        with self.superuser() as conn:
            return tuple(
                conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                for table in ("optouts", "optout_changes", "history", "settings", "audit")
            )


@pytest.fixture
def office(postgres: PostgresServer, pg_url: str, sandbox: SandboxThread) -> Office:
    logins = office_logins(postgres, pg_url)
    account = account_key(service_for(sandbox).profile)
    receiver = ServerData(PostgresDatabase(logins.login("Receiver")))
    replies = ReplyStore(
        receiver, local=Path(os.environ["GWDESK_DATA_DIR"]) / "receiver.sqlite3",
        optouts=OptOutRules(account, Keywords()),
    )  # fmt: skip
    try:
        [stored] = replies.add([IncomingReply(NUMBER, "61400000000", "STOP", T0)])
    finally:
        replies.close()
        receiver.close()
    with psycopg.connect(logins.login("Alex"), autocommit=True) as conn:  # a send on record
        conn.execute(
            "INSERT INTO history(at, channel, recipients, text, ok) "
            "VALUES ('2026-03-03T01:00:00+00:00', 'REST SMS', %s, 'Sale on!', 1)",
            (NUMBER,),
        )
    made = Office(logins, account, stored.reply.id)
    assert made.opted_out()
    return made


def change(number: str, opted_out: int, how: str, reason: str = "", **more: object) -> str:
    """A raw opt-out change, as a client would write it (the server fills in the rest)."""
    keyword, reply_id = more.get("keyword"), more.get("reply_id")
    return (
        "INSERT INTO optout_changes(account, number, opted_out, at, how, by_whom, keyword, "
        f"reply_id, reason, applied) VALUES ('{{account}}', '{number}', {opted_out}, "
        f"'2026-03-04T00:00:00+00:00', '{how}', 'the customer', "
        f"{'NULL' if keyword is None else repr(keyword)}, "
        f"{'NULL' if reply_id is None else reply_id}, '{reason}', 1)"
    )


# What a colleague with a plain SQL client might try, each refused by the server.
ATTEMPTS: dict[str, str] = {
    "delete the opt-out": f"DELETE FROM optouts WHERE number = '{NUMBER}'",
    "opt back in in place": f"UPDATE optouts SET opted_out = 0 WHERE number = '{NUMBER}'",
    "empty the list": "TRUNCATE optouts",
    "write a state directly": (
        "INSERT INTO optouts(account, number, opted_out, at, how, by_whom) VALUES "
        "('{account}', '61400000009', 0, '2026-03-04T00:00:00+00:00', 'operator', 'Sam')"
    ),
    "rewrite its history": "UPDATE optout_changes SET opted_out = 0",
    "delete its history": "DELETE FROM optout_changes",
    "empty its history": "TRUNCATE optout_changes",
    "forge the customer's START": change(
        NUMBER, 0, "reply (webhook)", keyword="START", reply_id="{reply}"
    ),
    "opt back in without a reason": change(NUMBER, 0, "operator"),
    "opt back in by import": change(NUMBER, 0, "import", "bulk resubscribe"),
    "store a fake START reply": (
        "INSERT INTO replies(from_number, to_number, text, received_at, source, stored_at) "
        f"VALUES ('{NUMBER}', '61400000000', 'START', '2026-03-04T00:00:00+00:00', 'webhook', "
        "'2026-03-04T00:00:00+00:00')"
    ),
    "rewrite who sent": "UPDATE history SET operator = 'Sam'",
    "delete a send": "DELETE FROM history",
    "empty the sends": "TRUNCATE history",
    "rewrite the keywords": "UPDATE settings SET value = '[\"XYZZY\"]'",
    "add a setting directly": "INSERT INTO settings(name, value) VALUES ('optouts.opt_out_keywords', '[\"XYZZY\"]')",
    "set keywords without STOP": "SELECT gwdesk_set('optouts.opt_out_keywords', '[\"XYZZY\"]')",
    "point the ReplyPath elsewhere": (
        "SELECT gwdesk_set('team.reply_path', '\"https://evil.example/replies/abcdefghijklmnop\"')"
    ),
    "forge an audit entry": (
        "INSERT INTO audit(at, operator, console, action, subject) VALUES "
        f"('2026-03-04T00:00:00+00:00', 'Sam', 'x', 'opted back in', '{NUMBER}')"
    ),
    "audit through the server's function": f"SELECT gwdesk_audit('opted back in', '{NUMBER}', 'x')",
    "rewrite the audit": "UPDATE audit SET operator = 'Sam'",
    "delete the audit": "DELETE FROM audit",
    "empty the audit": "TRUNCATE audit",
    "switch the rules off": "ALTER TABLE optout_changes DISABLE TRIGGER ALL",
    "drop a check": "ALTER TABLE optouts DROP CONSTRAINT optouts_how_checked",
    "shadow a table": "CREATE TABLE public.optout_rules (x int)",
    "shadow with a temporary table": "CREATE TEMP TABLE optouts (number text)",
    "give oneself rights first": "GRANT ALL ON optouts TO CURRENT_USER; DELETE FROM optouts",
    "act as the group": "SET ROLE NONE; RESET SESSION AUTHORIZATION; DELETE FROM optouts",
}


@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_an_operators_plain_sql_client_cannot_change_the_record(
    office: Office, attempt: str
) -> None:
    before = office.record()
    statement = ATTEMPTS[attempt].format(account=office.account, reply=office.stop_reply)
    with office.connect("Alex") as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(statement)
    assert isinstance(
        refused.value, psycopg.errors.InsufficientPrivilege | psycopg.errors.CheckViolation
    ), refused.value
    assert office.record() == before
    assert office.opted_out()


def test_after_every_attempt_gwdesk_send_to_the_opted_out_number_is_still_refused(
    office: Office, sandbox: SandboxThread, tmp_path: Path
) -> None:
    for statement in ATTEMPTS.values():
        with office.connect("Alex") as conn, pytest.raises(psycopg.Error):
            conn.execute(statement.format(account=office.account, reply=office.stop_reply))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "GWDESK_"))}
    env.update(GWDESK_PASSWORD="demo", GWDESK_DATA_DIR=str(tmp_path / "data"),
               GWDESK_CONFIG_DIR=str(tmp_path / "config"))  # fmt: skip
    sent = subprocess.run(
        [GWDESK, "send", "Last chance: 20% off", "--to", "0412 345 678", "--base-url",
         sandbox.rest_url, "--username", "demo", "--store", office.logins.login("Alex")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert sent.returncode == 1, sent.stderr
    assert f"Not sent: {NUMBER} opted out by replying STOP" in sent.stderr
    assert int(sandbox.query("SELECT COUNT(*) FROM messages")[0][0]) == 0


# ---- rows no console could read are refused --------------------------------------------------


NOT_UNDERSTOOD: dict[str, tuple[str, str]] = {
    "a send at no time": ("Alex", "INSERT INTO history(at, channel, recipients, text, ok) "
                          "VALUES ('not-a-time', 'SMS', '614', 'x', 1)"),
    "a send neither ok nor not": ("Alex", "INSERT INTO history(at, channel, recipients, text, ok) "
                                  "VALUES ('2026-03-04T00:00:00+00:00', 'SMS', '614', 'x', 7)"),
    "a change made some other way": ("Alex", change("61400000001", 1, "telepathy", "x")),
    "a change of a sender name": ("Alex", change("Telstra", 1, "operator", "x")),
    "an entry in no known state": (
        "Alex",
        "WITH b AS (INSERT INTO outbox_batches(send_id, gateway, channel, created_us, "
        "updated_us) VALUES ('s1', 'g', 'SMS', 1, 1) RETURNING id) INSERT INTO "
        "outbox_entries(batch_id, seq, recipients, recipient_count, body, state, created_us, "
        "updated_us) SELECT id, 1, '[]', 0, '{{}}', 'teleported', 1, 1 FROM b",
    ),
    "a reply at no time": ("Receiver", "INSERT INTO replies(from_number, to_number, text, "
                           "received_at, source, stored_at) VALUES ('61400000001', '614', 'hi', "
                           "'not-a-time', 'webhook', '2026-03-04T00:00:00+00:00')"),
    "a reply on 30 February": ("Receiver", "INSERT INTO replies(from_number, to_number, text, "
                               "received_at, source, stored_at) VALUES ('61400000001', '614', "
                               "'hi', '2026-02-30T00:00:00+00:00', 'webhook', "
                               "'2026-03-04T00:00:00+00:00')"),
    "a reply from nowhere": ("Receiver", "INSERT INTO replies(from_number, to_number, text, "
                             "received_at, source, stored_at) VALUES ('61400000001', '614', 'hi', "
                             "'2026-03-04T00:00:00+00:00', 'pigeon', '2026-03-04T00:00:00+00:00')"),
}  # fmt: skip


@pytest.mark.parametrize("row", sorted(NOT_UNDERSTOOD))
def test_a_row_the_consoles_would_not_understand_is_refused(office: Office, row: str) -> None:
    who, statement = NOT_UNDERSTOOD[row]
    with office.connect(who) as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(statement.format(account=office.account))
    assert isinstance(
        refused.value, psycopg.errors.CheckViolation | psycopg.errors.DatetimeFieldOverflow
    ), refused.value


def test_who_and_when_are_the_servers_to_say(office: Office) -> None:
    far = "9999-12-31T23:59:59+00:00"
    with office.connect("Alex") as conn:
        conn.execute(
            "INSERT INTO history(at, channel, recipients, text, ok, operator) "
            "VALUES ('2026-03-04T00:00:00+00:00', 'SMS', '61400000002', 'hi', 1, 'Sam')"
        )
        conn.execute(
            "INSERT INTO consoles(id, operator, host, started_at, seen_at, version) "
            f"VALUES ('c-alex', 'Sam', 'h', '{far}', '{far}', '1')"
        )
        conn.execute(
            "INSERT INTO claims(subject, console, operator, until_us) "
            "VALUES ('conversation:1', 'c-alex', 'Sam', 9000000000000000000)"
        )
    with office.superuser() as conn:
        history = conn.execute("SELECT operator, role FROM history ORDER BY id DESC").fetchone()
        console = conn.execute("SELECT operator, seen_at, role FROM consoles").fetchone()
        claim = conn.execute("SELECT operator, until_us FROM claims").fetchone()
        audit = conn.execute("SELECT operator, role, action FROM audit ORDER BY id DESC").fetchone()
    alex = office.logins.roles["Alex"]
    assert history == ("Alex", alex)
    assert audit == ("Alex", alex, "sent")
    assert (console[0], console[2]) == ("Alex", alex)
    assert datetime.fromisoformat(console[1]) - datetime.now(UTC) < timedelta(minutes=1)
    assert claim[0] == "Alex"
    assert claim[1] < (datetime.now(UTC) + timedelta(minutes=5)).timestamp() * 1_000_000


def test_a_console_cannot_end_or_change_another_operators_session(office: Office) -> None:
    with office.connect("Sam") as sam, office.connect("Alex") as alex:
        sam.execute(
            "INSERT INTO consoles(id, operator, host, started_at, seen_at, version) VALUES "
            "('c-sam', 'Sam', 'h', '2026-03-04T00:00:00+00:00', '2026-03-04T00:00:00+00:00', '1')"
        )
        [(pid,)] = sam.execute("SELECT pg_backend_pid()").fetchall()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            alex.execute("SELECT pg_terminate_backend(%s)", (pid,))
        assert alex.execute("UPDATE consoles SET host = 'x' WHERE id = 'c-sam'").rowcount == 0
        assert alex.execute("DELETE FROM consoles WHERE id = 'c-sam'").rowcount == 0
        assert sam.execute("SELECT host FROM consoles WHERE id = 'c-sam'").fetchone() == ("h",)


def test_only_the_receiver_publishes_the_reply_path_and_only_https_or_loopback(
    office: Office,
) -> None:
    path = '"https://replies.office.example/replies/abcdefghijklmnopqrst?from=#FROM#"'
    with office.connect("Receiver") as conn:
        conn.execute("SELECT gwdesk_set('team.reply_path', %s)", (path,))
        conn.execute(
            "SELECT gwdesk_set('team.reply_path', %s)",
            ('"http://127.0.0.1:8642/replies/abcdefghijklmnopqrst"',),
        )
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "SELECT gwdesk_set('team.reply_path', %s)",
                ('"http://replies.office.example/replies/abcdefghijklmnopqrst"',),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(change("61400000003", 1, "operator", "a receiver by hand"))


# ---- through gwdesk ----------------------------------------------------------------------------


@pytest.fixture
def alex(office: Office, tmp_path: Path) -> Iterator[LocalStore]:
    data = ProfileData(tmp_path / "alex.sqlite3", office.account, "AU",
                       office.logins.login("Alex"), "Somebody Else")  # fmt: skip
    store = open_profile(data)
    yield store
    store.close()


def audit_rows(office: Office) -> list[tuple[str, str, str, str, str]]:
    """(action, subject, operator, login, detail) of every audit entry, oldest first."""
    with office.superuser() as conn:
        return conn.execute(
            "SELECT action, subject, operator, role, detail FROM audit ORDER BY id"
        ).fetchall()


def test_the_desk_is_named_by_its_login_whatever_its_profile_says(alex: LocalStore) -> None:
    assert alex.operator == "Alex"


def test_opting_back_in_through_gwdesk_needs_a_reason_and_is_audited_under_the_login(
    office: Office, alex: LocalStore
) -> None:
    with pytest.raises(OptOutError, match="say why"):
        alex.optouts.set(NUMBER, False, reason="  ")
    assert office.opted_out()
    state = alex.optouts.set(NUMBER, False, reason="asked by phone on 3 March")
    assert (state.opted_out, state.by) == (False, "Alex")
    history = alex.optouts.history(NUMBER)
    assert [(c.opted_out, c.by, c.reason) for c in history][-1] == (
        False, "Alex", "asked by phone on 3 March",
    )  # fmt: skip
    assert audit_rows(office)[-1] == (
        "opted back in", NUMBER, "Alex", office.logins.roles["Alex"], "asked by phone on 3 March",
    )  # fmt: skip


async def test_a_send_writes_an_audit_entry_naming_the_login(
    office: Office, alex: LocalStore, sandbox: SandboxThread
) -> None:
    service = service_for(sandbox)
    data = ProfileData(Path(alex.path), office.account, "AU", office.logins.login("Alex"))
    try:
        sending = sending_for(service, alex, data)
        outcome = await sending.send_message(
            SmsForm(recipient="61400000004", text="Your order is ready")
        )
        await alex.history_writer.flushed()
    finally:
        await service.aclose()
    assert outcome.ok
    action, subject, operator, login, detail = audit_rows(office)[-1]
    assert (action, subject, operator, login) == (
        "sent", "61400000004", "Alex", office.logins.roles["Alex"],
    )  # fmt: skip
    assert detail.endswith("Your order is ready")


def test_a_rules_change_writes_an_audit_entry_per_setting_changed(
    office: Office, alex: LocalStore
) -> None:
    save_rules(alex.settings, check_rules("STOP", "START, UNSTOP", False, DEFAULT_INSTRUCTION))
    before = len(audit_rows(office))
    rules = check_rules("STOP, HALT", "START, UNSTOP", True, DEFAULT_INSTRUCTION)
    save_rules(alex.settings, rules)
    save_rules(alex.settings, rules)
    changed = [(a, s, o, d) for a, s, o, _login, d in audit_rows(office)[before:]]
    assert changed == [  # what did not change is not audited
        ("setting changed", "optouts.opt_out_keywords", "Alex", '["STOP", "HALT"]'),
        ("setting changed", "sending.marketing_default", "Alex", "true"),
    ]


def test_rules_without_stop_are_refused_before_they_reach_the_server() -> None:
    from gwdesk.app.optouts import RulesError

    with pytest.raises(RulesError, match="STOP"):
        check_rules("XYZZY", "START", False, "Reply XYZZY to opt out")


# ---- one bad row never stops the others ----------------------------------------------------


def a_reply_no_console_can_read(office: Office) -> None:
    """As the owner, with the server's check dropped for the test: what an older or broken
    client might have left behind."""
    with office.connect("owner") as conn:
        conn.execute("ALTER TABLE replies DROP CONSTRAINT replies_times_checked")
        conn.execute(
            "INSERT INTO replies(from_number, to_number, text, received_at, source, stored_at) "
            "VALUES ('61400000005', '614', 'garbled', 'not-a-time', 'webhook', 'not-a-time')"
        )


def a_genuine_reply(office: Office, text: str) -> None:
    receiver = ServerData(PostgresDatabase(office.logins.login("Receiver")))
    replies = ReplyStore(receiver, local=Path(os.environ["GWDESK_DATA_DIR"]) / "rx.sqlite3")
    try:
        replies.add([IncomingReply("61400000006", "61400000000", text, datetime.now(UTC))])
    finally:
        replies.close()
        receiver.close()


def test_the_catch_up_passes_an_unreadable_reply_once_and_reads_the_next(
    office: Office, alex: LocalStore
) -> None:
    catch_up = ReplyCatchUp(alex.replies, last_id=office.stop_reply)
    a_reply_no_console_can_read(office)
    a_genuine_reply(office, "Thanks, see you then")
    assert [r.text for r in catch_up.read()] == ["Thanks, see you then"]
    assert catch_up.unreadable == 1
    a_genuine_reply(office, "And one more thing")
    assert [r.text for r in catch_up.read()] == ["And one more thing"]
    assert catch_up.unreadable == 1


def test_commands_list_around_rows_they_cannot_read(
    office: Office, alex: LocalStore, tmp_path: Path
) -> None:
    a_reply_no_console_can_read(office)
    a_genuine_reply(office, "Thanks")
    with office.connect("owner") as conn:
        conn.execute("ALTER TABLE optouts DROP CONSTRAINT optouts_how_checked")
        conn.execute("UPDATE optouts SET how = 'carrier pigeon'")
        conn.execute("ALTER TABLE consoles DROP CONSTRAINT consoles_times_checked")
        conn.execute("ALTER TABLE consoles DISABLE TRIGGER consoles_seen")
        conn.execute(
            "INSERT INTO consoles(id, operator, host, started_at, seen_at, version) "
            "VALUES ('c-bad', 'x', 'h', 'zzz', 'zzz', '1')"
        )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    store = office.logins.login("Alex")
    for command in (["replies", "--store", store, "--json"], ["team", "status", store]):
        done = subprocess.run([GWDESK, *command], capture_output=True, text=True, env=env,
                              timeout=60)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    listed = subprocess.run([GWDESK, "replies", "--store", store, "--json"],
                            capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    texts = [json.loads(line)["text"] for line in listed.stdout.splitlines()]
    assert "Thanks" in texts
    assert "garbled" not in texts
    # The opt-out the server cannot describe any more still keeps the number out.
    kept = alex.optouts.opted_out([NUMBER])
    assert NUMBER in kept
    assert alex.optouts.unreadable.count == 1
    assert Presence(ServerData(PostgresDatabase(store)).database).live() == []


def test_a_profile_cannot_name_a_store_with_a_password_in_its_query() -> None:
    with pytest.raises(ValueError, match="must not hold a password"):
        Profile(name="Office", rest_url="https://gw.example/", username="ops",
                store_url="postgresql://alex@db.office.lan/gwdesk?sslmode=require&password=x")  # fmt: skip


def test_a_receiver_whose_reply_path_is_not_https_refuses_to_publish_it(
    office: Office, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["GWDESK_DATA_DIR"] = str(tmp_path / "rx")
    done = subprocess.run(
        [GWDESK, "listen", "--store", office.logins.login("Receiver"), "--port", "0",
         "--public-url", "http://replies.office.example", "--quiet"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "a team's ReplyPath must be an https address" in done.stderr
    with office.superuser() as conn:
        published = conn.execute(
            "SELECT value FROM settings WHERE name = 'team.reply_path'"
        ).fetchone()
    assert published is None


def test_the_receiver_applies_keywords_a_desk_saves_from_the_next_reply_on(
    office: Office, alex: LocalStore, sandbox: SandboxThread
) -> None:
    import httpx

    with listen_processes() as start:
        listening = start(
            "--store", office.logins.login("Receiver"), "--base-url", sandbox.rest_url,
            "--username", "demo", "--port", "0", "--no-backfill", "--quiet", password="demo",
        )  # fmt: skip
        template = ReplyTemplate.parse(listening.line(30))
        save_rules(alex.settings, check_rules("STOP, HALT", "START", False, DEFAULT_INSTRUCTION))
        halted = "61400000007"
        with httpx.Client(timeout=10) as http:
            deadline = time.monotonic() + 30
            while not alex.optouts.opted_out([halted]):  # the receiver hears the change
                assert time.monotonic() < deadline, "HALT never opted the number out"
                received = datetime.now(UTC).strftime("%d-%b-%Y %H:%M:%S")
                values = {"FROM": halted, "TO": "61400000000", "MSG": "halt",
                          "SENTDTS": received, "RCVDDTS": received}  # fmt: skip
                assert http.get(template.fill(values)).text == "OK"
                time.sleep(0.2)
    [state] = alex.optouts.opted_out([halted]).values()
    assert (state.by, state.keyword) == ("the customer", "HALT")


def test_moving_or_cancelling_a_colleagues_scheduled_send_is_audited_under_the_login(
    office: Office,
) -> None:
    with office.connect("Alex") as conn:
        conn.execute(
            "INSERT INTO outbox_batches(send_id, gateway, channel, label, created_us, "
            "updated_us, operator, held_until_us) "
            "VALUES ('gwd-sale', %s, 'sms', 'Sale', 1, 1, 'Alex', 1900000000000000)",
            (office.account,),
        )
    with office.connect("Sam") as conn:
        conn.execute(
            "UPDATE outbox_batches SET held_until_us = 1900003600000000, operator = 'Nobody' "
            "WHERE send_id = 'gwd-sale'"
        )
        conn.execute("UPDATE outbox_batches SET closed = 1 WHERE send_id = 'gwd-sale'")
    sam = office.logins.roles["Sam"]
    held = [(a, s, o, r) for a, s, o, r, _d in audit_rows(office) if a.startswith("scheduled")]
    assert held == [
        ("scheduled send moved", "Sale", "Sam", sam),
        ("scheduled send cancelled", "Sale", "Sam", sam),
    ]
    with office.superuser() as conn:
        assert conn.execute(
            "SELECT operator FROM outbox_batches WHERE send_id = 'gwd-sale'"
        ).fetchone() == ("Alex",)


HOURS = '{"weekdays": {"start": "08:00", "end": "20:00"}, "weekends": null}'


def test_an_operator_sets_the_sending_hours_through_the_servers_function(
    office: Office,
) -> None:
    with office.connect("Alex") as conn:
        conn.execute("SELECT gwdesk_set('sending.quiet_hours', %s)", (HOURS,))
        conn.execute("SELECT gwdesk_set('sending.quiet_hours_on', 'false')")
    with office.superuser() as conn:
        kept = conn.execute(
            "SELECT value FROM settings WHERE name = 'sending.quiet_hours'"
        ).fetchone()
    assert kept == (HOURS,)
    changed = [s for a, s, _o, _r, _d in audit_rows(office) if a == "setting changed"]
    assert changed[-2:] == ["sending.quiet_hours", "sending.quiet_hours_on"]


@pytest.mark.parametrize(
    "value",
    [
        '{"weekdays": {"start": "25:00", "end": "20:00"}, "weekends": null}',
        '{"weekdays": {"start": "20:00", "end": "08:00"}, "weekends": null}',
        '{"weekdays": {"start": "8:00", "end": "20:00"}, "weekends": null}',
        '{"weekdays": null, "weekends": null}',
        '{"weekdays": {"start": "08:00", "end": "20:00", "x": "1"}, "weekends": null}',
        '{"weekdays": {"start": "08:00", "end": "20:00"}}',
        '{"weekdays": {"start": "08:00", "end": "20:00"}, "weekends": null, "always": true}',
        '"08:00-20:00"',
        "[]",
    ],
)
def test_sending_hours_the_consoles_could_not_read_are_refused(office: Office, value: str) -> None:
    with office.connect("Alex") as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("SELECT gwdesk_set('sending.quiet_hours', %s)", (value,))
