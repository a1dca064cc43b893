"""The settings a profile keeps in its stores (table `settings`), read and written through
their declarations in `gwdesk.domain.settings`.

One row per setting, its value as JSON, so a flag stays a flag and a port a number.
What the row holds is read through the declaration: a value of the wrong type or
out of range reads as the default (`Setting.read`), so a damaged row never stops
the console.

Each setting is kept where its declaration says: the profile's own file (`local`:
the listener's port and secret, this console's operator) or the shared store
(`shared`: what a team agrees on, such as the opt-out keywords), which for one
workstation is the same file.

A team's server takes a change only through its own function (`gwdesk_set`), which
checks the value, refuses what the team's rules forbid and audits the change.

Two writes must hold across processes and consoles, on both engines, without a lock:
a watermark only ever rises (`keep_highest`), and a value made once (the listener's
secret) is kept by whichever process made it first (`made_once`). Both compare and
set: a row is changed only if it still holds what was read (`UPDATE … WHERE value = ?`),
and read again otherwise.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from gwdesk.domain.settings import Place, Setting
from gwdesk.store.database import store_methods
from gwdesk.store.engine import Database

T = TypeVar("T")
STORES = (Place.PROFILE_STORE, Place.SHARED_STORE)


@dataclass(slots=True)
class LockedConnection:
    """A connection and the lock its users take: one statement sequence at a time."""

    conn: sqlite3.Connection
    lock: threading.Lock = field(default_factory=threading.Lock)


class Executes(Protocol):
    """A connection or a `Session`: what a setting is read through."""

    def execute(self, sql: str, params: Any = ..., /) -> Any: ...


def _kept(setting: Setting[Any]) -> str:
    if setting.place not in STORES:
        raise ValueError(f"{setting.name} is kept in the {setting.place}, not the profile store")
    return setting.name


def _decode(text: object) -> object:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: what an older or damaged file holds, read by the declaration


def _kept_value(source: Executes, name: str) -> str | None:
    row = source.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def read_setting(source: Executes, setting: Setting[T]) -> T:
    """`setting` as the store holds it, read through `source` (a reader's connection, or a
    session of the store that keeps it)."""
    kept = _kept_value(source, _kept(setting))
    return setting.read(None if kept is None else _decode(kept))


@store_methods
class StoredSettings:
    """A profile's settings, each where its declaration keeps it; safe to use from any thread.

    `local` keeps the profile store's, `shared` the shared store's (None: the profile's
    own file keeps both, one workstation's case). `reads` and `shared_reads` are the
    connections reads go through when they must not wait on a writer's (a reply
    store's writer holds its connection through each commit).
    """

    def __init__(
        self,
        local: Database,
        shared: Database | None = None,
        *,
        reads: Database | None = None,
        shared_reads: Database | None = None,
    ) -> None:
        self._writers = {Place.PROFILE_STORE: local, Place.SHARED_STORE: shared or local}
        self._readers = {
            Place.PROFILE_STORE: reads or local,
            Place.SHARED_STORE: shared_reads or (shared if shared is not None else reads or local),
        }

    def _writer(self, setting: Setting[Any]) -> Database:
        _kept(setting)
        return self._writers[setting.place]

    def get(self, setting: Setting[T]) -> T:
        _kept(setting)
        with self._readers[setting.place].session() as session:
            return read_setting(session, setting)

    def set(self, setting: Setting[T], value: T) -> None:
        name = _kept(setting)
        text = json.dumps(setting.write(value))
        with self._writer(setting).session() as session:
            if session.audited_by_server:  # the server checks the value and audits it
                session.execute("SELECT gwdesk_set(?, ?)", (name, text))
                return
            session.execute(
                "INSERT INTO settings(name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, text),
            )

    def keep_highest(self, setting: Setting[int], value: int) -> None:
        """Raise a watermark to `value`; one already higher (another process's) stays.
        What is kept but unreadable (a damaged row) counts as lower."""
        made = json.dumps(setting.write(value))
        self._compare_and_set(setting, lambda kept: None if kept >= value else made)

    def made_once(self, setting: Setting[str], make: Callable[[], str]) -> str:
        """The setting, made with `make()` the first time (or when what is kept is unusable).

        Two processes making it at once keep the first one's: both then answer the same.
        """
        made: list[str] = []

        def replacement(kept: str) -> str | None:
            if kept:
                return None
            if not made:
                made.append(json.dumps(setting.write(make())))
            return made[0]

        return self._compare_and_set(setting, replacement)

    def _compare_and_set(self, setting: Setting[T], replacement: Callable[[T], str | None]) -> T:
        """Write `replacement(value read)` (JSON; None: keep what is there) only over the
        row that was read; read again and retry when another writer changed it meanwhile.
        The value then kept."""
        name = _kept(setting)
        with self._writer(setting).session() as session:
            while True:
                kept = _kept_value(session, name)
                value = setting.read(None if kept is None else _decode(kept))
                new = replacement(value)
                if new is None:
                    return value
                if kept is None:
                    changed = session.execute(
                        "INSERT INTO settings(name, value) VALUES (?, ?) "
                        "ON CONFLICT(name) DO NOTHING",
                        (name, new),
                    ).rowcount
                else:
                    changed = session.execute(
                        "UPDATE settings SET value = ? WHERE name = ? AND value = ?",
                        (new, name, kept),
                    ).rowcount
                if changed == 1:
                    return setting.read(_decode(new))
