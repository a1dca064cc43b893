"""A team's shared store on a PostgreSQL server: connections, schema and its upgrades.

Imported only when a profile names a server (`postgresql://…`): psycopg 3 and its
pool stay out of a one-desk console's start-up.

- `PostgresDatabase` lends connections of one pool per profile (each statement in
  autocommit unless a `transaction()` is asked for), turns the stores' `?`
  placeholders into psycopg's, reads rows by name or position like SQLite's, and
  raises every error as the store's own: a server that is down, refuses the login or
  drops the connection is `StoreUnavailable`, with what the operator should check.
- `migrate` brings the schema up to date under an advisory lock, so consoles starting
  together never run a step twice (the first runs it, the others wait and find it done);
  a schema newer than this gwdesk is refused rather than misread.
- Every shared table announces its changes (`NOTIFY gwdesk, '<table>'`, sent on commit),
  which consoles take as a "something changed" signal (`gwdesk.store.changes`).

Credentials: the URL names the server, database and role; the password comes from the
keyring, never from a settings file (the profile keeps the URL without it). TLS is the
URL's `sslmode` (`verify-full` with `sslrootcert` checks the server's certificate).
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

import psycopg
import psycopg_pool
from psycopg import sql as pgsql

from gwdesk.domain.profile import check_store_url, libpq_url
from gwdesk.store.database import ReadInterrupted, StoreBusy, StoreError, StoreUnavailable
from gwdesk.store.engine import Database, Result, Session
from gwdesk.store.pg_schema import PG_MIGRATIONS

SCHEMA_LOCK: Final = 0x6777_6465_736B  # "gwdesk": the advisory lock of schema upgrades
CHANNEL: Final = "gwdesk"
CONNECT_TIMEOUT: Final = 5.0
_PLACEHOLDER: Final = re.compile(r"\?")


@functools.lru_cache(maxsize=512)
def pg_sql(text: str) -> str:
    """A store's SQL with `?` placeholders, as psycopg takes it (`%s`, literal `%` doubled)."""
    return _PLACEHOLDER.sub("%s", text.replace("%", "%%"))


class Row(tuple[Any, ...]):
    """A row read by column name or by position, as `sqlite3.Row` is."""

    __slots__ = ()
    _index: ClassVar[dict[str, int]] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


@functools.lru_cache(maxsize=256)
def _row_type(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"__slots__": (), "_index": {n: i for i, n in enumerate(names)}})


def row_factory(cursor: psycopg.Cursor[Any]) -> Any:
    names = tuple(column.name for column in cursor.description or ())
    kind = _row_type(names)
    return lambda values: kind(values)


def store_error(exc: psycopg.Error, where: str) -> StoreError:
    """The store's error for a psycopg one, saying what to check."""
    # The server's own words, without the PL/pgSQL context lines of a rule it enforces.
    primary = getattr(getattr(exc, "diag", None), "message_primary", None)
    text = " ".join((primary or str(exc)).split()) or type(exc).__name__
    if isinstance(exc, psycopg.errors.QueryCanceled):  # `interrupt()`: a superseded read
        return ReadInterrupted(f"The read was stopped: {text}")
    if isinstance(exc, psycopg.errors.LockNotAvailable | psycopg.errors.DeadlockDetected):
        return StoreBusy(f"The shared store at {where} is busy: {text}")
    if isinstance(exc, psycopg.OperationalError | psycopg_pool.PoolTimeout):
        return StoreUnavailable(
            f"The shared store at {where} cannot be reached ({text}): check that the "
            "server is running and reachable, and the profile's store address and password."
        )
    return StoreError(f"The shared store at {where} refused the request: {text}")


@contextlib.contextmanager
def _translated(where: str) -> Iterator[None]:
    try:
        yield
    except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
        raise store_error(exc, where) from exc


class _PgSession(Session):
    audited_by_server: ClassVar[bool] = True

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[object] = ()) -> Result:
        return self.conn.execute(pg_sql(sql), params)

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> int:
        with self.conn.cursor() as cursor:
            cursor.executemany(pg_sql(sql), list(rows))
            return cursor.rowcount

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        with self.conn.transaction():
            self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield

    def interrupt(self) -> None:
        """Ask the server to cancel the statement running on this connection (a server
        that cannot be reached has nothing running to cancel)."""
        with contextlib.suppress(psycopg.Error):
            self.conn.cancel_safe(timeout=CONNECT_TIMEOUT)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the server says a client is: its login role, the name the record gives it, and
    whether that name is the server's own (an operator's or the receiver's login) or only
    what the client declared (a login shared by several desks, the owner)."""

    role: str
    name: str
    verified: bool
    owner: bool = False
    """The login owns the schema (the database's owner, or a superuser)."""


def where_of(url: str) -> str:
    """`host:port/database`, for messages (never the password)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{host}{port}{parts.path}"


class PostgresDatabase(Database):
    """A pool of connections to the team's server (see the module docstring)."""

    kind: ClassVar[str] = "postgresql"

    def __init__(
        self,
        url: str,
        password: str | None = None,
        *,
        min_size: int = 1,
        max_size: int = 8,
        application: str = "gwdesk",
        upgrade: bool = True,
        operator: str = "",
        console: str = "",
    ) -> None:
        """`operator` and `console`: who this client says it is. The server names an
        operator by their own login role and ignores this; only a login it cannot tell
        apart from others (the owner, a login shared by several desks) is named by it."""
        try:
            self.url = libpq_url(check_store_url(url))
        except ValueError as exc:
            raise StoreError(f"The store address: {exc}.") from None
        self.where = where_of(url)
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "row_factory": row_factory,
            "connect_timeout": CONNECT_TIMEOUT,
            "application_name": application[:63],
        }
        if password:
            kwargs["password"] = password
        self.connect_kwargs = kwargs
        self._declared = (operator[:200], console[:100])
        with _translated(self.where):
            # One connection first, even without an upgrade: a server that cannot be
            # reached (or a certificate for another name) is said as the server said it,
            # not as the pool's time-out.
            with psycopg.connect(self.url, **kwargs) as conn:
                if upgrade:
                    migrate(conn)
            self.pool = psycopg_pool.ConnectionPool(
                self.url,
                kwargs=kwargs,
                min_size=min_size,
                max_size=max_size,
                open=True,
                timeout=CONNECT_TIMEOUT,
                check=psycopg_pool.ConnectionPool.check_connection,
                configure=self._introduce,
            )

    def _introduce(self, conn: psycopg.Connection[Any]) -> None:
        """Say who this client is on a new connection (see `__init__`)."""
        conn.execute(
            "SELECT set_config('gwdesk.operator', %s, false), set_config('gwdesk.console', %s, false)",
            self._declared,
        )

    @property
    def location(self) -> str:
        return self.where

    def connect(self) -> psycopg.Connection[Any]:
        """A connection of its own (not the pool's): for a claim held while a batch is
        sent, or the change listener, whose life is not one statement's."""
        with _translated(self.where):
            conn = psycopg.connect(self.url, **self.connect_kwargs)
            try:
                self._introduce(conn)
            except BaseException:
                conn.close()
                raise
            return conn

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        with _translated(self.where), self.pool.connection() as conn:
            yield _PgSession(conn)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Session]:
        with _translated(self.where), self.pool.connection() as conn, conn.transaction():
            yield _PgSession(conn)

    def close(self) -> None:
        self.pool.close()

    def version(self) -> int:
        """The schema's version."""
        with self.session() as session:
            row = session.execute("SELECT version FROM gwdesk_schema").fetchone()
        return int(row[0])

    def whoami(self) -> Identity:
        """Who the server says this client is."""
        with self.session() as session:
            row = session.execute(
                "SELECT session_user, gwdesk_operator(), "
                "(SELECT kind FROM operators WHERE role = session_user AND removed_at IS NULL), "
                "(SELECT pg_has_role(session_user, c.relowner, 'MEMBER') FROM pg_class c "
                "WHERE c.oid = 'gwdesk_schema'::regclass)"
            ).fetchone()
        return Identity(str(row[0]), str(row[1]), row[2] in ("operator", "receiver"), bool(row[3]))


def schema_version(conn: psycopg.Connection[Any]) -> int:
    found = conn.execute("SELECT to_regclass('gwdesk_schema')").fetchone()
    if found is None or found[0] is None:
        return 0
    row = conn.execute("SELECT version FROM gwdesk_schema").fetchone()
    return int(row[0]) if row is not None else 0


def _owns_schema(conn: psycopg.Connection[Any]) -> bool:
    """Whether this login may change the schema (it has its owner's rights)."""
    row = conn.execute(
        "SELECT pg_has_role(current_user, c.relowner, 'USAGE') FROM pg_class c "
        "WHERE c.oid = 'gwdesk_schema'::regclass"
    ).fetchone()
    return bool(row and row[0])


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Bring the schema up to date, in one transaction under the advisory lock (the
    version read only once the lock is held); the version it is at."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        version = schema_version(conn)
        if version > len(PG_MIGRATIONS):
            raise StoreError(
                f"The shared store's schema is version {version}, newer than this gwdesk "
                f"knows ({len(PG_MIGRATIONS)}): update gwdesk on this workstation."
            )
        if 0 < version < len(PG_MIGRATIONS) and not _owns_schema(conn):
            raise StoreError(
                f"The shared store's schema is version {version}; this gwdesk needs "
                f"{len(PG_MIGRATIONS)}. Ask whoever owns the database to run `gwdesk team "
                "init` with this version of gwdesk (docs/team.md)."
            )
        for step in range(version, len(PG_MIGRATIONS)):
            conn.execute(PG_MIGRATIONS[step])
            conn.execute(
                pgsql.SQL("UPDATE gwdesk_schema SET version = {}").format(pgsql.Literal(step + 1))
            )
        return max(version, len(PG_MIGRATIONS))
