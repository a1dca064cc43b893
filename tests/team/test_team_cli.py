"""`gwdesk team init`, `add-operator`, `remove-operator` and `status` against a real server,
run by the database's owner as `docs/team.md` has it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from gwdesk.app.profile_data import ProfileData, account_key, open_profile, sending_for
from gwdesk.app.sms import SmsForm, check_message
from gwdesk.domain.contacts import ContactCard
from gwdesk.domain.settings import MARKETING_DEFAULT
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.database import StoreError
from gwdesk.store.pg_roles import group_names
from gwdesk.store.pg_schema import PG_MIGRATIONS
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply
from gwdesk.store.team import Audit, Presence
from tests.contract.rest_support import service_for
from tests.postgres_server import PostgresServer
from tests.team.logins import as_role

CUSTOMER = "61412345678"

GWDESK = str(Path(sys.executable).with_name("gwdesk"))


def gwdesk(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "GWDESK_STORE"))}
    return subprocess.run(
        [GWDESK, *args], capture_output=True, text=True, env={**clean, **env}, timeout=60
    )


@pytest.fixture
def roles(postgres: PostgresServer, pg_url: str) -> tuple[str, str]:
    """An owner of the database (who runs init, with CREATEROLE as docs/team.md says) and a
    login several desks used to share (an older install's consoles' role)."""
    suffix = urlsplit(pg_url).path.strip("/")[-24:]
    owner, clerk = f"own_{suffix}", f"clerk_{suffix}"
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{owner}" LOGIN CREATEROLE')
        conn.execute(f'CREATE ROLE "{clerk}" LOGIN')
        conn.execute(f'ALTER DATABASE "{urlsplit(pg_url).path.strip("/")}" OWNER TO "{owner}"')
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'ALTER SCHEMA public OWNER TO "{owner}"')
    return owner, clerk


def init(pg_url: str, owner: str, *args: str) -> dict[str, object]:
    done = gwdesk("team", "init", as_role(pg_url, owner), *args, "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def test_init_creates_the_schema_and_the_groups_with_just_their_rights(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, _clerk = roles
    report = init(pg_url, owner)
    groups = group_names(urlsplit(pg_url).path.strip("/"))
    assert report["ok"]
    assert report["problems"] == []
    assert report["schema_version"] == len(PG_MIGRATIONS)
    assert report["groups"] == {"operators": groups.operators, "receivers": groups.receivers}
    assert len(groups.operators.encode()) <= 63


def test_init_twice_changes_nothing_the_second_time(pg_url: str, roles: tuple[str, str]) -> None:
    owner, _clerk = roles
    first, again = init(pg_url, owner), init(pg_url, owner)
    assert first == again


def test_an_owner_without_createrole_is_told_what_to_ask_for_and_nothing_is_upgraded(
    pg_url: str, roles: tuple[str, str], postgres: PostgresServer
) -> None:
    owner, clerk = roles
    a_database_of_the_previous_release(pg_url, owner, clerk)
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute(f'ALTER ROLE "{owner}" NOCREATEROLE')
    done = gwdesk("team", "init", as_role(pg_url, owner), "--grant", clerk)
    assert done.returncode == 1
    assert "needs the CREATEROLE attribute" in done.stderr
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM gwdesk_schema").fetchone() == (1,)
    status = gwdesk("team", "status", as_role(pg_url, owner))
    assert status.returncode == 1
    needs = (
        f"schema is version 1; this gwdesk needs {len(PG_MIGRATIONS)}: whoever owns the database"
    )
    assert needs in status.stderr


def test_an_added_operator_logs_in_as_themselves_and_is_named_by_the_server(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, _clerk = roles
    init(pg_url, owner)
    added = gwdesk(
        "team", "add-operator", as_role(pg_url, owner), "alex_w", "--name", "Alex Wong",
        "--json", GWDESK_OPERATOR_PASSWORD="correct horse battery",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout) == {
        "ok": True, "login": "alex_w", "name": "Alex Wong", "kind": "operator",
    }  # fmt: skip
    database = PostgresDatabase(as_role(pg_url, "alex_w"), operator="Someone Else")
    try:
        me = database.whoami()
    finally:
        database.close()
    assert (me.role, me.name, me.verified) == ("alex_w", "Alex Wong", True)
    status = gwdesk("team", "status", as_role(pg_url, "alex_w"))
    assert status.returncode == 0, status.stderr
    assert "you are Alex Wong, logged in as alex_w" in status.stdout
    assert "operator alex_w: Alex Wong" in status.stdout
    owners = gwdesk("team", "status", as_role(pg_url, owner))
    assert f"you are the database's owner, logged in as {owner}" in owners.stdout


def test_the_new_password_reaches_the_server_as_a_scram_verifier_only(
    pg_url: str, roles: tuple[str, str], postgres: PostgresServer
) -> None:
    owner, _clerk = roles
    init(pg_url, owner)
    done = gwdesk(
        "team", "add-operator", as_role(pg_url, owner), "sam_w",
        GWDESK_OPERATOR_PASSWORD="s3cret-Pa55",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        [(stored,)] = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'sam_w'")
    assert stored.startswith("SCRAM-SHA-256$")
    assert "s3cret-Pa55" not in stored
    assert "s3cret-Pa55" not in postgres.log()


def test_adding_an_operator_without_a_password_anywhere_is_refused(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, _clerk = roles
    init(pg_url, owner)
    done = subprocess.run(
        [GWDESK, "team", "add-operator", as_role(pg_url, owner), "kim_w"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("GWDESK_OPERATOR")},
    )  # fmt: skip
    assert done.returncode == 2
    assert "GWDESK_OPERATOR_PASSWORD" in done.stderr


def test_a_removed_operator_can_no_longer_log_in(pg_url: str, roles: tuple[str, str]) -> None:
    owner, _clerk = roles
    init(pg_url, owner)
    added = gwdesk("team", "add-operator", as_role(pg_url, owner), "lee_w", "--no-password")
    assert added.returncode == 0, added.stderr
    removed = gwdesk("team", "remove-operator", as_role(pg_url, owner), "lee_w")
    assert removed.returncode == 0, removed.stderr
    assert "lee_w" in removed.stdout
    with pytest.raises(StoreError):
        PostgresDatabase(as_role(pg_url, "lee_w"), upgrade=False)
    audit = PostgresDatabase(pg_url, upgrade=False)
    try:
        actions = [(e.action, e.subject) for e in Audit(audit).entries()]
    finally:
        audit.close()
    assert actions[-2:] == [("operator added", "lee_w"), ("operator removed", "lee_w")]


@pytest.mark.parametrize("login", ["Alex", "pg_monitor", "x" * 64, "a-b", "a b"])
def test_a_login_name_gwdesk_does_not_make_is_refused(
    pg_url: str, roles: tuple[str, str], login: str
) -> None:
    owner, _clerk = roles
    done = gwdesk("team", "add-operator", as_role(pg_url, owner), login, "--no-password")
    assert done.returncode == 2
    assert "login" in done.stderr or "pg_" in done.stderr


def test_status_lists_the_consoles_heard_from(pg_url: str) -> None:
    database = PostgresDatabase(pg_url)
    Presence(database).arrive("desk-1", "alex", "front-desk", "0.2.0")
    database.close()
    done = gwdesk("team", "status", pg_url)
    assert done.returncode == 0, done.stderr
    assert "alex on front-desk (gwdesk 0.2.0)" in done.stdout
    assert "1 console(s) connected" in done.stdout


@pytest.mark.parametrize(
    "netloc_query",
    [("gwdesk:hunter2@{host}", ""), ("gwdesk@{host}", "password=hunter2"),
     ("gwdesk@{host}", "sslmode=require&PassWord=hunter2")],
)  # fmt: skip
def test_a_password_in_the_address_is_refused_and_never_echoed(
    pg_url: str, netloc_query: tuple[str, str]
) -> None:
    parts = urlsplit(pg_url)
    netloc, query = netloc_query
    leaky = urlunsplit(
        parts._replace(netloc=netloc.format(host=f"{parts.hostname}:{parts.port}"), query=query)
    )
    gateway = ["--base-url", "http://127.0.0.1:9/", "--username", "demo", "--store", leaky]
    for command in (
        ["team", "status", leaky],
        ["team", "init", leaky],
        ["team", "add-operator", leaky, "alex"],
        ["replies", "--store", leaky],
        ["listen", "--port", "0", "--store", leaky],
        ["send", "Hello", "--to", "0412345678", *gateway],
        ["optouts", "list", *gateway],
    ):
        done = gwdesk(*command, GWDESK_PASSWORD="demo")
        assert done.returncode == 2, command
        assert "must not hold a password" in done.stderr
        assert "hunter2" not in done.stdout + done.stderr


def test_a_server_elsewhere_without_tls_is_refused_unless_the_office_says_its_lan_is_trusted(
    postgres: PostgresServer,
) -> None:
    clear = "postgresql://gwdesk@db.office.invalid/gwdesk?sslmode=disable"
    done = gwdesk("team", "status", clear)
    assert done.returncode == 2
    assert "must be encrypted" in done.stderr
    assert "gwdesk_plaintext=trusted-lan" in done.stderr
    trusted = gwdesk("team", "status", clear + "&gwdesk_plaintext=trusted-lan")
    assert trusted.returncode == 1  # taken: it got as far as trying the (missing) server
    assert "cannot be reached" in trusted.stderr


def test_a_server_that_is_away_is_a_clear_failure(postgres: PostgresServer) -> None:
    done = gwdesk("team", "status", f"postgresql://x@127.0.0.1:{postgres.port + 1}/nosuch")
    assert done.returncode == 1
    assert "cannot be reached" in done.stderr


# ---- an office that shared one login before this release ----------------------------------


def a_database_of_the_previous_release(pg_url: str, owner: str, clerk: str) -> None:
    """The schema as the previous release made it (its one migration step, by its owner)
    and its grant to the consoles' shared role, word for word."""
    with psycopg.connect(as_role(pg_url, owner), autocommit=True) as conn:
        with conn.transaction():
            conn.execute(PG_MIGRATIONS[0])
            conn.execute("UPDATE gwdesk_schema SET version = 1")
        name = urlsplit(pg_url).path.strip("/")
        conn.execute(f'GRANT CONNECT ON DATABASE "{name}" TO "{clerk}"')
        conn.execute(f'GRANT USAGE ON SCHEMA public TO "{clerk}"')
        for table in (
            "history", "replies", "outbox_batches", "outbox_entries", "optouts",
            "settings", "consoles", "claims", "templates", "contacts", "contact_numbers",
            "contact_groups", "contact_members",
        ):  # fmt: skip
            conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO "{clerk}"')
        for table in ("audit", "optout_changes"):
            conn.execute(f'GRANT SELECT, INSERT ON {table} TO "{clerk}"')
        conn.execute(f'GRANT SELECT ON gwdesk_schema TO "{clerk}"')


def test_before_the_owner_upgrades_a_console_says_who_must(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, clerk = roles
    a_database_of_the_previous_release(pg_url, owner, clerk)
    with pytest.raises(StoreError, match="Ask whoever owns the database to run `gwdesk team init`"):
        PostgresDatabase(as_role(pg_url, clerk))


async def test_a_login_shared_before_the_upgrade_does_its_whole_days_work_after_it(
    pg_url: str, roles: tuple[str, str], sandbox: SandboxThread, tmp_path: Path
) -> None:
    owner, clerk = roles
    a_database_of_the_previous_release(pg_url, owner, clerk)
    report = init(pg_url, owner, "--grant", clerk)
    assert report["shared"] == clerk
    assert report["problems"] == []
    service = service_for(sandbox)
    clerk_url = as_role(pg_url, clerk)
    data = ProfileData(tmp_path / "desk.sqlite3", account_key(service.profile), "AU", clerk_url,
                       "Alex")  # fmt: skip
    store = open_profile(data)
    try:
        assert store.operator == "Alex"  # a shared login: named by what the desk says
        store.replies.add([IncomingReply(CUSTOMER, "61400000000", "STOP", datetime.now(UTC))])
        store.optouts.set("61412000001", True, reason="asked by phone")
        store.templates.add("Reminder", "Hi {name}, see you at {time|10:00}")
        store.contacts.add(ContactCard("Zoë", ("61412000002",), (("name", "Zoë"),)))
        store.settings.set(MARKETING_DEFAULT, True)
        sending = sending_for(service, store, data)
        message = check_message(SmsForm(text="Your order is ready", factual=True), "AU")
        outcome = await sending.send_list(message, [CUSTOMER, "61412000002", "61412000003"])
        await store.history_writer.flushed()
    finally:
        await service.aclose()
        store.close()
    assert outcome.ok
    assert outcome.lodged_recipients == 3  # factual: the opted-out number too, and it says so
    audit = PostgresDatabase(pg_url, upgrade=False)
    try:
        entries = Audit(audit).entries()
    finally:
        audit.close()
    actions = {e.action for e in entries if e.operator == "Alex"}
    assert {"opted out", "template added", "setting changed", "sent"} <= actions


def test_rows_written_before_the_upgrade_keep_no_login_rather_than_the_upgraders(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, clerk = roles
    a_database_of_the_previous_release(pg_url, owner, clerk)
    with psycopg.connect(as_role(pg_url, clerk), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO history(at, channel, recipients, text, ok, operator) "
            "VALUES ('2026-03-01T00:00:00+00:00', 'SMS', '614', 'before', 1, 'Alex')"
        )
    init(pg_url, owner, "--grant", clerk)
    with psycopg.connect(as_role(pg_url, clerk), autocommit=True) as conn:
        conn.execute(
            "INSERT INTO history(at, channel, recipients, text, ok, operator) "
            "VALUES ('2026-03-02T00:00:00+00:00', 'SMS', '614', 'after', 1, 'Alex')"
        )
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT text, role FROM history ORDER BY id").fetchall()
    assert rows == [("before", None), ("after", clerk)]


def test_once_no_desk_uses_the_shared_login_it_is_dropped(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, clerk = roles
    a_database_of_the_previous_release(pg_url, owner, clerk)
    init(pg_url, owner, "--grant", clerk)
    removed = gwdesk("team", "remove-operator", as_role(pg_url, owner), clerk)
    assert removed.returncode == 0, removed.stderr
    assert "the login is dropped" in removed.stdout
    with psycopg.connect(pg_url, autocommit=True) as conn:
        gone = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (clerk,)).fetchone()
    assert gone is None


@pytest.mark.parametrize(
    "change",
    ["UPDATE {} SET at = at", "DELETE FROM {}", "TRUNCATE {}"],
)
@pytest.mark.parametrize("table", ["audit", "optout_changes", "optouts", "history", "settings"])
def test_the_shared_login_can_no_longer_rewrite_the_record(
    pg_url: str, roles: tuple[str, str], table: str, change: str
) -> None:
    owner, clerk = roles
    a_database_of_the_previous_release(pg_url, owner, clerk)
    init(pg_url, owner, "--grant", clerk)
    statement = change.format(table).replace(
        "SET at = at", "SET value = value" if table == "settings" else "SET at = at"
    )
    with (
        psycopg.connect(as_role(pg_url, clerk), autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute(statement)


def test_init_takes_back_a_right_to_rewrite_the_audit_given_by_hand(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, clerk = roles
    init(pg_url, owner, "--grant", clerk)
    with psycopg.connect(as_role(pg_url, owner), autocommit=True) as conn:
        conn.execute(f'GRANT UPDATE, DELETE ON audit TO "{clerk}"')
    report = init(pg_url, owner, "--grant", clerk)
    assert report["problems"] == []
    with (
        psycopg.connect(as_role(pg_url, clerk), autocommit=True) as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        conn.execute("DELETE FROM audit")


def test_init_reports_a_right_it_cannot_take_back(
    pg_url: str, roles: tuple[str, str], postgres: PostgresServer
) -> None:
    owner, clerk = roles
    init(pg_url, owner, "--grant", clerk)
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute(f'GRANT pg_signal_backend TO "{clerk}"')
    done = gwdesk("team", "init", as_role(pg_url, owner), "--grant", clerk, "--json")
    assert done.returncode == 1
    assert (
        f"{clerk}: may end other sessions (pg_signal_backend) too much"
        in json.loads(done.stdout)["problems"]
    )
