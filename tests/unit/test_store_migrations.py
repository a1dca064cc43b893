"""The local store's migrations: a new file, a file from a newer gwdesk, and two openers at once."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from gwdesk.store.database import MIGRATIONS, StoreError, connect, statements


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
    with pytest.raises(sqlite3.OperationalError):
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
