"""The settings a profile's store keeps (table `settings`), read and written through their
declarations in `gwdesk.domain.settings`.

One row per setting, its value as JSON, so a flag stays a flag and a port a number.
What the row holds is read through the declaration: a value of the wrong type or
out of range reads as the default (`Setting.read`), so a damaged row never stops
the console. Two writes have their own statement because they must hold across
processes: a watermark only ever rises (`keep_highest`), and a value made once
(the listener's secret) is kept by whichever process made it first (`made_once`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gwdesk.domain.settings import Place, Setting
from gwdesk.store.database import store_methods

T = TypeVar("T")


@dataclass(slots=True)
class LockedConnection:
    """A connection and the lock its users take: one statement sequence at a time."""

    conn: sqlite3.Connection
    lock: threading.Lock = field(default_factory=threading.Lock)


def _kept(setting: Setting[Any]) -> str:
    if setting.place is not Place.PROFILE_STORE:
        raise ValueError(f"{setting.name} is kept in the {setting.place}, not the profile store")
    return setting.name


def _decode(text: object) -> object:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: what an older or damaged file holds, read by the declaration


def read_setting(conn: sqlite3.Connection, setting: Setting[T]) -> T:
    """`setting` as the store holds it, on `conn` (a reader's connection too)."""
    row = conn.execute("SELECT value FROM settings WHERE name = ?", (_kept(setting),)).fetchone()
    return setting.read(None if row is None else _decode(row[0]))


@store_methods
class StoredSettings:
    """The profile store's settings; safe to use from any thread."""

    def __init__(self, writer: LockedConnection, reader: LockedConnection | None = None) -> None:
        self._writer = writer
        self._reader = reader or writer

    def get(self, setting: Setting[T]) -> T:
        with self._reader.lock:
            return read_setting(self._reader.conn, setting)

    def set(self, setting: Setting[T], value: T) -> None:
        self._upsert(setting, value, "excluded.value")

    def keep_highest(self, setting: Setting[int], value: int) -> None:
        """Raise a watermark to `value`; one already higher (another process's) stays."""
        self._upsert(setting, value, "MAX(CAST(value AS INTEGER), CAST(excluded.value AS INTEGER))")

    def _upsert(self, setting: Setting[T], value: T, kept: str) -> None:
        """Insert the setting's row, or set its value to `kept` (SQL) when there is one."""
        name = _kept(setting)
        text = json.dumps(setting.write(value))
        with self._writer.lock:
            self._writer.conn.execute(
                "INSERT INTO settings(name, value) VALUES (?, ?) "  # noqa: S608 - constant SQL
                f"ON CONFLICT(name) DO UPDATE SET value = {kept}",
                (name, text),
            )

    def made_once(self, setting: Setting[str], make: Callable[[], str]) -> str:
        """The setting, made with `make()` the first time (or when what is kept is unusable).

        Two processes making it at once keep the first one's: both then answer the same.
        """
        name = _kept(setting)
        with self._writer.lock:
            conn = self._writer.conn
            row = conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
            kept = None if row is None else str(row[0])
            if setting.read(None if kept is None else _decode(kept)):
                return setting.read(_decode(kept))
            made = json.dumps(setting.write(make()))
            conn.execute(
                "INSERT INTO settings(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE "
                "SET value = excluded.value WHERE value IS ?",
                (name, made, kept),
            )
            row = conn.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
        return setting.read(_decode(row[0]))
