"""Which console is sending a batch, on a team's server: an advisory lock per batch.

The file's way (`outbox_claims`: a lock file per process) cannot reach another
workstation. On PostgreSQL a batch's claim is a session-level advisory lock,
`pg_try_advisory_lock(NAMESPACE, batch id)`, taken on a connection the outbox holds
for its life (not one of the pool's, which serve every statement). The server lets
go of a session's locks when the session ends, however it ends: a console that
quits, crashes or is killed with SIGKILL (its socket closes), or a connection the
server lost. So a claim lasts exactly as long as its console can still act on it,
and another console takes over at once, with no time-out to wait out.

Since a lost connection drops the claim without telling its holder, the outbox asks
the server whether the claim is still held, in the very transaction that marks an
entry in flight (`BEGIN_GUARD`, see `outbox.OutboxStore.begin`), and sends nothing
when it is not. The claims of every console show in `pg_locks`, so any console can
tell which batches another is sending (`holders`).

Imported only on a team's server (psycopg stays out of a one-desk console's start-up).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Final

import psycopg

from gwdesk.store.database import StoreError
from gwdesk.store.postgres import PostgresDatabase, store_error

NAMESPACE: Final = 0x6777_6F62
"""The first key of every batch claim ("gwob"); the second is the batch's id. The
schema's upgrade lock is a single 64-bit key, so the two never meet."""
MAX_KEY: Final = 2**31 - 1
_LOCKS: Final = (
    "SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted "  # noqa: S608 - constants
    "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    f"AND l.classid = {NAMESPACE} AND l.objsubid = 2 AND l.objid::bigint = outbox_entries.batch_id"
)
BEGIN_GUARD: Final = (
    f"CASE WHEN batch_id = ANY(?::bigint[]) THEN EXISTS ({_LOCKS} AND l.pid = ?) "
    f"ELSE NOT EXISTS ({_LOCKS}) END"
)
"""True when this outbox's claim connection (pid) still holds the entry's batch, for a
batch it claimed (the ids given), or when nobody holds it, for one it did not."""


class AdvisoryClaims:
    """The batch claims of one outbox, on a connection of its own (see the module docstring)."""

    def __init__(self, server: PostgresDatabase) -> None:
        self.server = server
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int:
        """The claim connection's server process (0 before the first claim)."""
        conn = self._conn
        return 0 if conn is None or conn.closed else int(conn.info.backend_pid)

    def take(self, batch_id: int) -> bool:
        """Claim `batch_id`; False when another console holds it. A claim connection
        found lost is opened again (the claims it held are gone with it: `begin` refuses
        their entries)."""
        if not 0 < batch_id <= MAX_KEY:
            raise StoreError(f"Outbox batch {batch_id} cannot be claimed on the shared store.")
        with self._lock:
            for attempt in (1, 2):
                conn = self._connection()
                try:
                    row = conn.execute(
                        "SELECT pg_try_advisory_lock(%s, %s)", (NAMESPACE, batch_id)
                    ).fetchone()
                except psycopg.OperationalError as exc:
                    self._drop()
                    if attempt == 2:
                        raise store_error(exc, self.server.where) from exc
                    continue
                except psycopg.Error as exc:
                    raise store_error(exc, self.server.where) from exc
                return bool(row and row[0])
        return False  # not reached

    def let_go(self, batch_id: int) -> None:
        """Release a claim; never raises (a lost connection has let go already)."""
        with self._lock:
            conn = self._conn
            if conn is None or conn.closed:
                return
            try:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (NAMESPACE, batch_id))
            except psycopg.Error:
                self._drop()

    def holders(self, batch_ids: list[int] | None = None) -> dict[int, int]:
        """Each claimed batch (of `batch_ids`, or all) and the server process holding it,
        whichever console that is; read through the pool."""
        query = (
            "SELECT objid::bigint, pid FROM pg_locks WHERE locktype = 'advisory' AND granted "  # noqa: S608
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            f"AND classid = {NAMESPACE} AND objsubid = 2"
        )
        with self.server.session() as session:
            rows = session.execute(query).fetchall()
        wanted = None if batch_ids is None else set(batch_ids)
        return {int(row[0]): int(row[1]) for row in rows if wanted is None or int(row[0]) in wanted}

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _connection(self) -> psycopg.Connection[Any]:
        conn = self._conn
        if conn is None or conn.closed or conn.broken:
            self._drop()
            conn = self._conn = self.server.connect()
        return conn

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(psycopg.Error):
                conn.close()
