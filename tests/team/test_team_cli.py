"""`gwdesk team init` and `status` against a real server, with a least-privilege role."""

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
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply
from gwdesk.store.team import Audit, Presence
from tests.contract.rest_support import service_for
from tests.postgres_server import PostgresServer

CUSTOMER = "61412345678"

GWDESK = str(Path(sys.executable).with_name("gwdesk"))


def as_role(url: str, role: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))


def gwdesk(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run([GWDESK, *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def roles(postgres: PostgresServer, pg_url: str) -> tuple[str, str]:
    """An owner of the database (who runs init) and a clerk (the consoles' role)."""
    suffix = urlsplit(pg_url).path.strip("/")[-24:]
    owner, clerk = f"own_{suffix}", f"clerk_{suffix}"
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{owner}" LOGIN')
        conn.execute(f'CREATE ROLE "{clerk}" LOGIN')
        conn.execute(f'ALTER DATABASE "{urlsplit(pg_url).path.strip("/")}" OWNER TO "{owner}"')
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'ALTER SCHEMA public OWNER TO "{owner}"')
    return owner, clerk


def test_init_creates_the_schema_and_grants_the_clerk_what_it_needs(
    pg_url: str, roles: tuple[str, str]
) -> None:
    owner, clerk = roles
    done = gwdesk("team", "init", as_role(pg_url, owner), "--grant", clerk, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"]
    assert report["missing"] == []
    assert report["schema_version"] >= 1
    database = PostgresDatabase(as_role(pg_url, clerk))  # finds the schema current: no upgrade
    try:
        with database.transaction() as session:
            session.execute("INSERT INTO audit(at, operator, console, action) VALUES (?, ?, ?, ?)",
                            ("2026-01-01T00:00:00+00:00", "alex", "a", "sent"))  # fmt: skip
        with pytest.raises(StoreError, match="permission denied"), database.session() as session:
            session.execute("CREATE TABLE sneaky (x INTEGER)")
    finally:
        database.close()


def test_init_twice_changes_nothing_the_second_time(pg_url: str, roles: tuple[str, str]) -> None:
    owner, _clerk = roles
    first = gwdesk("team", "init", as_role(pg_url, owner), "--json")
    again = gwdesk("team", "init", as_role(pg_url, owner), "--json")
    assert first.returncode == again.returncode == 0
    assert json.loads(first.stdout)["schema_version"] == json.loads(again.stdout)["schema_version"]


def test_status_lists_the_consoles_heard_from(pg_url: str) -> None:
    database = PostgresDatabase(pg_url)
    Presence(database).arrive("desk-1", "alex", "front-desk", "0.2.0")
    database.close()
    done = gwdesk("team", "status", pg_url)
    assert done.returncode == 0, done.stderr
    assert "alex on front-desk (gwdesk 0.2.0)" in done.stdout
    assert "1 console(s) connected" in done.stdout


def test_a_password_in_the_address_is_refused_and_never_echoed(pg_url: str) -> None:
    parts = urlsplit(pg_url)
    leaky = urlunsplit(parts._replace(netloc=f"gwdesk:hunter2@{parts.hostname}:{parts.port}"))
    done = gwdesk("team", "status", leaky)
    assert done.returncode == 2
    assert "must not hold a password" in done.stderr
    assert "hunter2" not in done.stdout + done.stderr


def test_a_server_that_is_away_is_a_clear_failure(postgres: PostgresServer) -> None:
    done = gwdesk("team", "status", f"postgresql://x@127.0.0.1:{postgres.port + 1}/nosuch")
    assert done.returncode == 1
    assert "cannot be reached" in done.stderr


def initialised(pg_url: str, roles: tuple[str, str]) -> str:
    """The clerk's address once the owner ran `team init --grant` for it."""
    owner, clerk = roles
    done = gwdesk("team", "init", as_role(pg_url, owner), "--grant", clerk, "--json")
    assert done.returncode == 0, done.stderr
    return as_role(pg_url, clerk)


async def test_a_console_logged_in_as_the_granted_role_does_its_whole_days_work(
    pg_url: str, roles: tuple[str, str], sandbox: SandboxThread, tmp_path: Path
) -> None:
    clerk_url = initialised(pg_url, roles)
    service = service_for(sandbox)
    data = ProfileData(tmp_path / "desk.sqlite3", account_key(service.profile), "AU", clerk_url,
                       "Alex")  # fmt: skip
    store = open_profile(data)
    try:
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
        actions = [e.action for e in Audit(audit).entries()]
    finally:
        audit.close()
    assert len(actions) >= 2  # the operator's opt-out and the template, at least


@pytest.mark.parametrize("table", ["audit", "optout_changes"])
@pytest.mark.parametrize("change", ["UPDATE {} SET at = at", "DELETE FROM {}", "TRUNCATE {}"])
def test_the_granted_role_cannot_rewrite_who_did_what(
    pg_url: str, roles: tuple[str, str], table: str, change: str
) -> None:
    database = PostgresDatabase(initialised(pg_url, roles), upgrade=False)
    try:
        with pytest.raises(StoreError, match="permission denied"), database.session() as session:
            session.execute(change.format(table))
    finally:
        database.close()


def test_init_takes_back_a_right_to_rewrite_the_audit_given_before(
    pg_url: str, roles: tuple[str, str], postgres: PostgresServer
) -> None:
    owner, clerk = roles
    initialised(pg_url, roles)
    with psycopg.connect(as_role(pg_url, owner), autocommit=True) as conn:
        conn.execute(f'GRANT UPDATE, DELETE ON audit TO "{clerk}"')
    done = gwdesk("team", "init", as_role(pg_url, owner), "--grant", clerk, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["missing"] == []
