"""The local store's migrations: a new file, a file from a newer gwdesk, and two openers at once."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from gwdesk.domain.settings import (
    LISTENER_ENABLED,
    LISTENER_HOST,
    LISTENER_PORT,
    LISTENER_PUBLIC_HOST,
    LISTENER_SECRET,
    LOGS_HEADER,
    REPLIES_SEEN_UP_TO,
)
from gwdesk.store.database import MIGRATIONS, StoreError, connect, statements
from gwdesk.store.local import LocalStore

SETTINGS_STEP = 6
"""The step that moved reply_meta and log_settings into `settings`."""


def test_a_new_file_is_brought_to_the_latest_version(tmp_path: Path) -> None:
    conn = connect(tmp_path / "store.sqlite3")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_opening_an_up_to_date_file_again_changes_nothing(tmp_path: Path) -> None:
    connect(tmp_path / "store.sqlite3").close()
    conn = connect(tmp_path / "store.sqlite3")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_a_file_from_a_newer_gwdesk_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    raw.close()
    with pytest.raises(StoreError, match="newer gwdesk"):
        connect(path)


def test_two_openers_racing_on_a_new_file_both_succeed(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def open_store() -> None:
        start.wait()
        try:
            connect(path).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def test_a_failed_step_leaves_the_file_at_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE drafts (x)")  # the first step's table, already there
    raw.close()
    with pytest.raises(StoreError, match="already exists"):  # the store's error, not SQLite's
        connect(path)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 0
    assert (
        raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'history'").fetchone()[0] == 0
    )


def test_triggers_and_quoted_semicolons_stay_one_statement() -> None:
    script = """
    CREATE TABLE t (a TEXT DEFAULT 'x;y');
    CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN
        UPDATE t SET a = 'p;q' WHERE rowid = new.rowid;
    END;
    """
    parts = list(statements(script))
    assert len(parts) == 2
    assert parts[1].startswith("CREATE TRIGGER")
    assert parts[1].endswith("END;")


def test_an_incomplete_step_is_refused() -> None:
    with pytest.raises(StoreError, match="incomplete"):
        list(statements("CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1;"))


def old_file(path: Path, meta: dict[str, str], log_settings: dict[str, str]) -> None:
    """A file as gwdesk left it before settings had a table of their own."""
    raw = sqlite3.connect(path)
    for step in MIGRATIONS[:SETTINGS_STEP]:
        for statement in statements(step):
            raw.execute(statement)
    raw.execute(f"PRAGMA user_version = {SETTINGS_STEP}")
    raw.executemany("INSERT INTO reply_meta(key, value) VALUES (?, ?)", meta.items())
    raw.executemany("INSERT INTO log_settings(key, value) VALUES (?, ?)", log_settings.items())
    raw.commit()
    raw.close()


def test_an_older_files_listener_and_log_settings_are_kept_on_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    old_file(
        path,
        {
            "listener_host": "192.168.1.20",
            "listener_public_host": "desk.example.com",
            "listener_enabled": "0",
            "listener_port": "8765",
            "listener_secret": "kept-secret-segment",
            "seen_up_to": "42",
        },
        {"header": '"AAAA/wAAAAA="'},
    )
    store = LocalStore(path)
    try:
        settings = store.settings
        assert settings.get(LISTENER_HOST) == "192.168.1.20"
        assert settings.get(LISTENER_PUBLIC_HOST) == "desk.example.com"
        assert settings.get(LISTENER_ENABLED) is False
        assert settings.get(LISTENER_PORT) == 8765
        assert settings.get(LISTENER_SECRET) == "kept-secret-segment"
        assert settings.get(REPLIES_SEEN_UP_TO) == 42
        assert settings.get(LOGS_HEADER) == "AAAA/wAAAAA="
        assert store.replies.secret() == "kept-secret-segment"  # the ReplyPath stays valid
        assert store.replies.remembered_port() == 8765
        assert store.replies.seen_up_to() == 42
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert "reply_meta" not in tables
        assert "log_settings" not in tables
    finally:
        store.close()


def test_an_older_files_garbled_settings_read_as_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    old_file(
        path,
        {"listener_port": "80x", "seen_up_to": "-3", "listener_host": "", "listener_enabled": "1"},
        {"header": "not json"},
    )
    store = LocalStore(path)
    try:
        settings = store.settings
        assert settings.get(LISTENER_PORT) is None
        assert settings.get(REPLIES_SEEN_UP_TO) == 0
        assert settings.get(LISTENER_HOST) == "127.0.0.1"
        assert settings.get(LISTENER_ENABLED) is True
        assert settings.get(LOGS_HEADER) == ""
        assert len(store.replies.secret()) == 32  # none was kept: one is made now
    finally:
        store.close()


def test_an_older_file_without_settings_upgrades_to_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    old_file(path, {}, {})
    store = LocalStore(path)
    try:
        assert store.settings.get(LISTENER_ENABLED) is True
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    finally:
        store.close()
