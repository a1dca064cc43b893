"""`gwdesk team init` and `status` against a real server, with a least-privilege role."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from gwdesk.store.database import StoreError
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.team import Presence
from tests.postgres_server import PostgresServer

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
