"""TLS to the team's server with `sslmode=verify-full` and the office's CA: a server the CA
vouches for under the name dialled is used; any other is refused before a password or
a row crosses, and the refusal says why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.store.database import StoreUnavailable
from gwdesk.store.postgres import PostgresDatabase
from tests.pki import PrivateCa
from tests.postgres_server import SUPERUSER, PostgresServer, postgres_server


@pytest.fixture(scope="module")
def office_ca(tmp_path_factory: pytest.TempPathFactory) -> PrivateCa:
    return PrivateCa(tmp_path_factory.mktemp("office-ca"), "Office gwdesk CA")


@pytest.fixture(scope="module")
def tls_server(office_ca: PrivateCa) -> Iterator[PostgresServer]:
    """A server whose certificate the office's CA made for 127.0.0.1 only."""
    with postgres_server(tls=office_ca.issue("db", ("127.0.0.1",))) as server:
        yield server


def address(server: PostgresServer, host: str, ca: Path, mode: str = "verify-full") -> str:
    return f"postgresql://{SUPERUSER}@{host}:{server.port}/postgres?sslmode={mode}&sslrootcert={ca}"


def test_a_server_the_office_ca_vouches_for_is_used(
    tls_server: PostgresServer, office_ca: PrivateCa
) -> None:
    database = PostgresDatabase(address(tls_server, "127.0.0.1", office_ca.path))
    try:
        with database.session() as session:
            used = session.execute("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            assert used.fetchone()[0] is True
    finally:
        database.close()


def test_a_certificate_of_another_ca_is_refused_with_why(
    tls_server: PostgresServer, tmp_path: Path
) -> None:
    stranger = PrivateCa(tmp_path, "Somebody else's CA")
    with pytest.raises(StoreUnavailable, match="certificate verify failed"):
        PostgresDatabase(address(tls_server, "127.0.0.1", stranger.path))


def test_a_certificate_for_another_name_is_refused_with_why(
    tls_server: PostgresServer, office_ca: PrivateCa
) -> None:
    with pytest.raises(StoreUnavailable, match='does not match host name "localhost"'):
        PostgresDatabase(address(tls_server, "localhost", office_ca.path))
