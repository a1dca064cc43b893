"""Conversations on a team's server, as the server keeps them: tried with a plain psycopg
connection logged in as an operator's own login (no gwdesk code in between), then
through gwdesk by two desks (Alex and Sam, each their own login) and the receiver."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from gwdesk.store.conversations import ConversationStore
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply, ReplyStore
from gwdesk.store.shared import ServerData
from tests.postgres_server import PostgresServer
from tests.team.logins import OfficeLogins, office_logins

CUSTOMER = "61412345678"
T0 = datetime(2026, 3, 3, 3, 2, tzinfo=UTC)


@pytest.fixture
def logins(postgres: PostgresServer, pg_url: str) -> OfficeLogins:
    return office_logins(postgres, pg_url)


@pytest.fixture
def desks(logins: OfficeLogins) -> Iterator[dict[str, ConversationStore]]:
    opened = {name: PostgresDatabase(logins.login(name)) for name in ("Alex", "Sam")}
    yield {name: ConversationStore(db, operator=name) for name, db in opened.items()}
    for database in opened.values():
        database.close()


def receive(logins: OfficeLogins, tmp_path: Path, *texts: str) -> None:
    """The office's receiver stores the customer's replies."""
    server = ServerData(PostgresDatabase(logins.login("Receiver")))
    store = ReplyStore(server, local=tmp_path / "receiver.sqlite3")
    try:
        store.add(
            [
                IncomingReply(CUSTOMER, "61400000000", text, T0.replace(second=n))
                for n, text in enumerate(texts)
            ]
        )
    finally:
        store.close()
        server.close()


def superuser(logins: OfficeLogins) -> psycopg.Connection[Any]:
    return psycopg.connect(logins.url, autocommit=True)


def kept(logins: OfficeLogins) -> tuple[list[Any], list[Any], list[Any]]:
    with superuser(logins) as conn:
        return (
            conn.execute("SELECT * FROM conversations ORDER BY 1").fetchall(),
            conn.execute("SELECT * FROM conversation_reads ORDER BY 1, 2").fetchall(),
            conn.execute("SELECT * FROM audit ORDER BY id").fetchall(),
        )


ATTEMPTS: dict[str, str] = {
    "close a conversation without the audit": (
        f"INSERT INTO conversations(number, state, changed_at, changed_by) "
        f"VALUES ('{CUSTOMER}', 'done', '2026-03-04T00:00:00+00:00', 'Sam')"
    ),
    "rewrite who changed it": "UPDATE conversations SET changed_by = 'Sam'",
    "reassign in place": "UPDATE conversations SET assigned_to = 'Alex'",
    "delete a conversation": "DELETE FROM conversations",
    "empty the conversations": "TRUNCATE conversations",
    "write Sam's read mark": (
        "INSERT INTO conversation_reads(reader, number, up_to) VALUES ('{sam}', '', 999)"
    ),
    "hand one's read mark to Sam": "UPDATE conversation_reads SET reader = '{sam}'",
    "empty the read marks": "TRUNCATE conversation_reads",
    "set a state it does not know": f"SELECT gwdesk_conversation('{CUSTOMER}', 'gone', NULL, NULL, false)",
    "snooze into the past": (
        f"SELECT gwdesk_conversation('{CUSTOMER}', 'snoozed', '2020-01-01T00:00:00+00:00', "
        "NULL, false)"
    ),
    "assign to nobody's name": f"SELECT gwdesk_conversation('{CUSTOMER}', NULL, NULL, 'Mallory', true)",
    "name a conversation that is no number": "SELECT gwdesk_conversation('<b>x</b>', 'done', NULL, NULL, false)",
    "switch the reopening off": "ALTER TABLE replies DISABLE TRIGGER replies_reopen",
}  # fmt: skip


@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_an_operators_plain_sql_client_cannot_change_a_conversation_behind_the_server(
    logins: OfficeLogins, desks: dict[str, ConversationStore], attempt: str
) -> None:
    desks["Sam"].set_state(CUSTOMER, "waiting")
    desks["Sam"].mark_all_read()
    desks["Alex"].mark_all_read()
    before = kept(logins)
    statement = ATTEMPTS[attempt].format(sam=logins.roles["Sam"])
    alex = psycopg.connect(logins.login("Alex"), autocommit=True)
    with alex as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(statement)
    assert isinstance(
        refused.value, psycopg.errors.InsufficientPrivilege | psycopg.errors.CheckViolation
    ), refused.value
    assert kept(logins) == before


def test_an_operator_cannot_see_or_clear_another_operators_read_marks(
    logins: OfficeLogins, desks: dict[str, ConversationStore]
) -> None:
    desks["Sam"].mark_all_read()
    with psycopg.connect(logins.login("Alex"), autocommit=True) as conn:
        assert conn.execute("SELECT * FROM conversation_reads").fetchall() == []
        assert conn.execute("DELETE FROM conversation_reads").rowcount == 0
    with superuser(logins) as conn:
        readers = conn.execute("SELECT reader FROM conversation_reads").fetchall()
    assert readers == [(logins.roles["Sam"],)]


def test_a_change_through_the_servers_function_is_stamped_with_the_login_not_the_claim(
    logins: OfficeLogins,
) -> None:
    with psycopg.connect(logins.login("Alex"), autocommit=True) as conn:
        conn.execute("SELECT set_config('gwdesk.operator', 'Sam', false)")
        conn.execute(f"SELECT gwdesk_conversation('{CUSTOMER}', 'done', NULL, NULL, false)")
    with superuser(logins) as conn:
        row = conn.execute("SELECT state, changed_by, role FROM conversations").fetchone()
        audit = conn.execute(
            "SELECT operator, role, action FROM audit ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert row == ("done", "Alex", logins.roles["Alex"])
    assert audit == ("Alex", logins.roles["Alex"], "conversation done")


def test_a_reply_reopens_a_done_conversation_for_both_desks(
    logins: OfficeLogins, desks: dict[str, ConversationStore], tmp_path: Path
) -> None:
    receive(logins, tmp_path, "thanks")
    desks["Alex"].set_state(CUSTOMER, "done")
    assert desks["Sam"].get(CUSTOMER).state == "done"
    receive(logins, tmp_path, "thanks", "actually, one more thing")
    assert [desks[d].get(CUSTOMER).state for d in ("Alex", "Sam")] == ["open", "open"]
    with superuser(logins) as conn:
        action = conn.execute("SELECT action FROM audit ORDER BY id DESC LIMIT 1").fetchone()
    assert action == ("conversation reopened",)


def test_an_assignment_by_one_desk_shows_on_the_other(
    desks: dict[str, ConversationStore],
) -> None:
    desks["Alex"].assign(CUSTOMER, "sam")  # a current operator, in any letter case
    seen = desks["Sam"].get(CUSTOMER)
    assert (seen.assigned_to, seen.changed_by) == ("Sam", "Alex")


def test_unread_counts_are_each_operators_own(
    logins: OfficeLogins, desks: dict[str, ConversationStore], tmp_path: Path
) -> None:
    receive(logins, tmp_path, "a", "b")
    desks["Alex"].mark_read(CUSTOMER)
    assert desks["Alex"].unread() == (0, 0)
    assert desks["Sam"].unread() == (1, 2)


def test_the_cli_lists_mine_as_sams_operator_only_once_assigned_to_sam(
    logins: OfficeLogins, tmp_path: Path
) -> None:
    receive(logins, tmp_path, "hello")

    def run(who: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "GWDESK_"))}
        env.update(GWDESK_DATA_DIR=str(tmp_path / who / "data"),
                   GWDESK_CONFIG_DIR=str(tmp_path / who / "config"))  # fmt: skip
        return subprocess.run(
            [sys.executable, "-m", "gwdesk.cli", "conversations", *args, "--base-url",
             "http://127.0.0.1:9/", "--username", "demo", "--store", logins.login(who)],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip

    assert CUSTOMER not in run("Sam", "list", "--mine").stdout
    assigned = run("Alex", "assign", "0412 345 678", "Sam")
    assert assigned.returncode == 0, assigned.stderr
    assert CUSTOMER not in run("Alex", "list", "--mine").stdout.replace(" ", "")
    mine = run("Sam", "list", "--mine")
    assert mine.returncode == 0, mine.stderr
    assert "+61 412 345 678  open  Sam  1 unread of 1" in mine.stdout


def test_the_operators_to_assign_to_are_the_servers_current_operators_not_its_receiver(
    desks: dict[str, ConversationStore],
) -> None:
    assert desks["Sam"].operators() == ["Alex", "Sam"]
