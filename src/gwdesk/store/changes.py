"""Being told when another console (or the office's reply receiver) changed shared data.

PostgreSQL announces every change of a shared table on commit (`NOTIFY gwdesk,
'<table>'`, see `pg_schema.py`). A notification is only a "something changed" signal:
it reaches the sessions connected at that moment, once, with no replay. So a console
reads the rows itself, from where it last was (each table's ids only grow), and after
a lost connection it is told `RESYNC`, reads everything past its last position, and
misses nothing that happened while it was away.

`ChangeFeed` listens on a connection of its own, on a thread of its own; it calls
`on_change(tables)` with the tables named since the last call (several notifications
of one burst arrive as one call), and `on_state(connected)` when the connection is lost
or back. It reconnects with back-off, forever, until closed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from gwdesk.store.database import StoreError

log = logging.getLogger("gwdesk.store.changes")
RESYNC: Final = "*"
"""Named after a (re)connection: everything may have changed while nobody listened."""
BACKOFF: Final = (0.2, 0.5, 1.0, 2.0, 5.0)
POLL: Final = 0.1
"""How long notifications are gathered into one call (and how soon a close is seen)."""
PROBE_AFTER: Final = 5.0
"""Seconds of silence after which the connection is probed, so a dead one is noticed."""

Connect = Callable[[], Any]
"""Opens a psycopg connection (autocommit) to listen on."""


class ChangeFeed:
    """Notifications of one server's shared tables (see the module docstring)."""

    def __init__(
        self,
        connect: Connect,
        on_change: Callable[[frozenset[str]], None],
        on_state: Callable[[bool], None] = lambda _connected: None,
        *,
        channel: str = "gwdesk",
    ) -> None:
        self._connect = connect
        self._on_change = on_change
        self._on_state = on_state
        self._channel = channel
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gwdesk-changes", daemon=True)
        self.connected = False

    def start(self) -> ChangeFeed:
        self._thread.start()
        return self

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _set_connected(self, connected: bool) -> None:
        if connected != self.connected:
            self.connected = connected
            self._on_state(connected)

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                conn = self._connect()
            except (StoreError, OSError, Exception) as exc:
                self._set_connected(False)
                wait = BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                log.info("change feed: not connected (%s); again in %.1f s", exc, wait)
                self._stop.wait(wait)
                continue
            failures = 0
            try:
                self._listen(conn)
            except Exception as exc:
                log.info("change feed: connection lost (%s)", exc)
            finally:
                self._set_connected(False)
                with contextlib.suppress(Exception):  # closing a dead connection
                    conn.close()

    def _listen(self, conn: Any) -> None:
        conn.execute(f"LISTEN {self._channel}")
        self._set_connected(True)
        self._on_change(frozenset({RESYNC}))  # whatever happened while nobody listened
        quiet_since = time.monotonic()
        while not self._stop.is_set():
            names = {notice.payload for notice in conn.notifies(timeout=POLL)}
            if names:
                quiet_since = time.monotonic()
                self._on_change(frozenset(names))
            elif time.monotonic() - quiet_since > PROBE_AFTER:
                conn.execute("SELECT 1")  # a server gone silent is found out, not waited on
                quiet_since = time.monotonic()
