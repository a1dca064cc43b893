"""Nothing gwdesk writes can be read by another local user: a profile's file holds the
listener's secret, and whoever reads it can post replies. Folders are 0700 and files
0600 whatever the umask, and what an earlier version left readable is tightened when
gwdesk opens it."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC
from pathlib import Path

import pytest

from gwdesk.domain.profile import Profile
from gwdesk.importing.export import write_invalid_rows
from gwdesk.importing.recipients import InvalidRow
from gwdesk.logs.export import export_csv
from gwdesk.logs.query import LogQuery
from gwdesk.paths import AppPaths
from gwdesk.profiles import ProfileStore
from gwdesk.sandbox.db import open_database
from gwdesk.store.local import LocalStore
from gwdesk.store.reader import Reading
from gwdesk.ui.app import console_settings
from gwdesk.ui.console import configure_logging
from tests.unit.logcache_support import cache, record, write
from tests.unit.test_outbox_store import record as record_batch

GWDESK = Path(sys.executable).with_name("gwdesk")
WORK = Profile(name="Work", rest_url="https://gateway.example.com", username="ops")


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask, under which files are created 0644 unless asked otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.fixture
def paths(tmp_path: Path) -> AppPaths:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)  # the operator's own
    return AppPaths(config=home / "config", data=home / "data")


def modes(root: Path) -> dict[str, str]:
    """Every folder and file under `root` (itself included) and its permission bits."""
    found = {".": oct(stat.S_IMODE(root.stat().st_mode))}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = oct(stat.S_IMODE(path.stat().st_mode))
    return found


def private(root: Path) -> dict[str, str]:
    """`modes`, expected: 0700 for folders, 0600 for files."""
    return {name: oct(0o700 if (root / name).is_dir() else 0o600) for name in modes(root)}


@pytest.fixture
def gwdesk_log(paths: AppPaths) -> Iterator[logging.Handler]:
    """The console's log handler on `paths`, removed afterwards."""
    root = logging.getLogger("gwdesk")
    before = list(root.handlers)
    configure_logging(paths)
    [handler] = [h for h in root.handlers if h not in before]
    yield handler
    root.removeHandler(handler)
    handler.close()


def test_a_profile_its_store_and_its_outbox_claims_are_private_under_umask_022(
    paths: AppPaths, umask_022: None
) -> None:
    ProfileStore(paths.config).save(WORK)
    store = LocalStore(paths.profile_db("Work"))
    try:
        store.replies.secret()
        [first, *_] = record_batch(store.outbox)
        entry = store.outbox.entry(first)
        assert entry is not None
        store.outbox.claim(entry.batch_id)  # takes the process's lock file
        found = modes(paths.data)
        assert {"profiles/Work.sqlite3-wal", "profiles/Work.sqlite3-shm"} <= found.keys()
        assert any(name.endswith(".lock") for name in found)
        assert found == private(paths.data)
    finally:
        store.close()
    assert modes(paths.config) == private(paths.config) == {".": "0o700", "profiles.json": "0o600"}


def test_exports_are_private_under_umask_022(tmp_path: Path, umask_022: None) -> None:
    exports = tmp_path / "exports"
    exports.mkdir()
    with cache(tmp_path / "p.sqlite3") as (store, writer):
        write(writer, [record(1), record(2)])
        writer.commit()
        export_csv(
            Reading(store.conn), LogQuery(), exports / "log.csv", columns=["message_id"], zone=UTC
        )
    write_invalid_rows(exports / "invalid.csv", [InvalidRow(3, "04x", "not a number")])
    found = modes(exports)
    del found["."]  # the operator's own folder, chosen in a dialog: left as it is
    assert found == {"log.csv": "0o600", "invalid.csv": "0o600"}


def test_the_console_log_and_its_rotations_are_private_under_umask_022(
    paths: AppPaths, umask_022: None, gwdesk_log: logging.Handler
) -> None:
    logging.getLogger("gwdesk.test").warning("a line to rotate")
    assert isinstance(gwdesk_log, logging.handlers.RotatingFileHandler)
    gwdesk_log.doRollover()
    logging.getLogger("gwdesk.test").warning("a line after the rotation")
    assert modes(paths.data) == private(paths.data)
    assert {"gwdesk.log", "gwdesk.log.1"} <= modes(paths.data).keys()


def test_console_settings_stay_private_when_qt_rewrites_them(
    paths: AppPaths, umask_022: None
) -> None:
    settings = console_settings(paths)
    for value in ("first", "second"):  # each sync replaces the file (QSaveFile)
        settings.setValue("window/state", value)
        settings.sync()
    assert "second" in (paths.config / "console.ini").read_text(encoding="utf-8")
    assert modes(paths.config) == private(paths.config)


def test_the_sandbox_database_is_private_under_umask_022(paths: AppPaths, umask_022: None) -> None:
    conn = open_database(paths.sandbox_db)
    try:
        conn.execute("INSERT INTO meta(key, value) VALUES ('x', 'y')")
        found = modes(paths.data)
        assert "sandbox/sandbox.sqlite3-wal" in found
        assert found == private(paths.data)
    finally:
        conn.close()


def test_the_sandbox_leaves_a_folder_it_did_not_make_as_it_was(
    tmp_path: Path, umask_022: None
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    open_database(shared / "demo.sqlite3").close()
    assert modes(shared) == {".": "0o755", "demo.sqlite3": "0o600"}


def run_console(home: Path) -> None:
    """`gwdesk --sandbox` on `home` for a second, as an operator starts it."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GWDESK_CONFIG_DIR": str(home / "config"),
        "GWDESK_DATA_DIR": str(home / "data"),
    }
    done = subprocess.run(
        [str(GWDESK), "--sandbox", "--quit-after", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_the_console_on_its_sandbox_writes_nothing_another_user_can_read(
    tmp_path: Path, umask_022: None
) -> None:
    home = tmp_path / "home"
    run_console(home)
    found = modes(home)
    assert {
        "config/console.ini",
        "data/gwdesk.log",
        "data/sandbox/sandbox.sqlite3",
        "data/sandbox/sandbox.log",
    } <= found.keys()
    assert any(name.startswith("data/profiles/") for name in found)
    assert found == private(home)


def test_files_an_earlier_version_left_readable_are_tightened_on_open(
    paths: AppPaths, umask_022: None
) -> None:
    for folder in (paths.config, paths.data / "profiles", paths.data / "sandbox"):
        folder.mkdir(parents=True, mode=0o755)
    ProfileStore(paths.config).save(WORK)
    paths.config.chmod(0o755)
    (paths.config / "profiles.json").chmod(0o644)
    (paths.config / "console.ini").write_text("[General]\n", encoding="utf-8")
    (paths.data / "gwdesk.log").write_text("old\n", encoding="utf-8")
    (paths.data / "gwdesk.log.1").write_text("older\n", encoding="utf-8")
    old = sqlite3.connect(paths.profile_db("Work"))  # as an earlier gwdesk left it: 0644
    old.execute("PRAGMA journal_mode=WAL")
    old.execute("CREATE TABLE leftover (x)")  # its -wal and -shm exist while it is open
    open_database(paths.sandbox_db).close()
    paths.sandbox_db.chmod(0o644)
    home = paths.data.parent
    before = modes(home)
    assert before["data/profiles/Work.sqlite3-wal"] == before["config/console.ini"] == "0o644"
    assert before["data/profiles"] == before["config"] == "0o755"

    ProfileStore(paths.config).profiles()
    LocalStore(paths.profile_db("Work")).close()
    old.close()
    run_console(home)

    assert modes(home) == private(home)
