"""An office's logins on the test's database, as `docs/team.md` sets them up: an owner with
CREATEROLE who owns the database and runs `team init`, each operator and the receiver
a login of their own (the throwaway server trusts loopback logins: no passwords)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import psycopg

from gwdesk.store.pg_roles import add_operator, prepare_team
from gwdesk.store.postgres import PostgresDatabase
from tests.postgres_server import PostgresServer


def as_role(url: str, role: str) -> str:
    """`url` logging in as `role`."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))


@dataclass(frozen=True)
class OfficeLogins:
    url: str
    """The database, as the server's superuser reaches it (to break things on purpose)."""
    owner: str
    roles: dict[str, str]
    """Each person's display name -> their login."""

    def login(self, name: str) -> str:
        """The URL a person logs in with (by display name, or `owner`)."""
        return as_role(self.url, self.owner if name == "owner" else self.roles[name])


def office_logins(
    postgres: PostgresServer,
    pg_url: str,
    operators: tuple[str, ...] = ("Alex", "Sam"),
    receivers: tuple[str, ...] = ("Receiver",),
) -> OfficeLogins:
    """Make the owner, run `team init`'s preparation as it, and add each person's login."""
    database = urlsplit(pg_url).path.strip("/")
    suffix = database[-20:].lower()
    owner = f"own_{suffix}"
    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{owner}" LOGIN CREATEROLE')
        conn.execute(f'ALTER DATABASE "{database}" OWNER TO "{owner}"')
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'ALTER SCHEMA public OWNER TO "{owner}"')
    roles: dict[str, str] = {}
    server = PostgresDatabase(as_role(pg_url, owner), operator="the owner")
    try:
        prepare_team(server)
        for name in operators + receivers:
            role = f"{name.lower()}_{suffix}"
            add_operator(server, role, name, receiver=name in receivers)
            roles[name] = role
    finally:
        server.close()
    return OfficeLogins(pg_url, owner, roles)
