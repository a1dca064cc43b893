"""A profile's settings on both engines: each kept where its declaration says, and the two
writes that must hold across processes (a watermark that never goes back, a value made
once) holding under writers racing each other. A team's server keeps only the team's
settings (each checked by the server itself); what is one desk's stays in its file."""

from __future__ import annotations

import json
import multiprocessing
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.domain.settings import (
    LISTENER_PUBLIC_HOST,
    LISTENER_SECRET,
    OPT_OUT_INSTRUCTION,
    OPT_OUT_KEYWORDS,
    REPLIES_SEEN_UP_TO,
    SETTINGS,
    TEAM_REPLY_PATH,
    Place,
    kept_in,
)
from gwdesk.store.database import connect
from gwdesk.store.engine import Database, SqliteDatabase
from gwdesk.store.stored_settings import StoredSettings
from tests.settings_support import SAMPLES
from tests.team.support import database_address, database_at

KEPT = kept_in(Place.PROFILE_STORE) + kept_in(Place.SHARED_STORE)


def raw(database: Database, name: str) -> str | None:
    with database.session() as session:
        row = session.execute("SELECT value FROM settings WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def write_raw(database: Database, name: str, value: str) -> None:
    with database.session() as session:
        session.execute(
            "INSERT INTO settings(name, value) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            (name, value),
        )


@pytest.fixture
def own_file(tmp_path: Path) -> Iterator[Database]:
    """A desk's own file: where the settings that are one desk's are kept."""
    opened = SqliteDatabase(connect(tmp_path / "local.sqlite3"))
    yield opened
    opened.close()


def test_every_setting_of_the_stores_round_trips(database: Database, own_file: Database) -> None:
    settings = StoredSettings(own_file, database)
    for setting in KEPT:
        settings.set(setting, SAMPLES[setting.name])
    again = StoredSettings(own_file, database)
    assert {s.name: again.get(s) for s in KEPT} == {s.name: SAMPLES[s.name] for s in KEPT}


def test_the_teams_settings_go_to_the_shared_store_and_the_consoles_stay_local(
    database: Database, tmp_path: Path
) -> None:
    local = SqliteDatabase(connect(tmp_path / "local.sqlite3"))
    settings = StoredSettings(local, database)
    settings.set(OPT_OUT_KEYWORDS, ("STOP", "ENOUGH"))
    settings.set(TEAM_REPLY_PATH, "https://replies.example.com/x?f=#FROM#")
    settings.set(LISTENER_PUBLIC_HOST, "Sam")
    settings.set(REPLIES_SEEN_UP_TO, 12)
    assert json.loads(raw(database, OPT_OUT_KEYWORDS.name) or "") == ["STOP", "ENOUGH"]
    assert raw(database, TEAM_REPLY_PATH.name) is not None
    assert raw(local, OPT_OUT_KEYWORDS.name) is None
    assert raw(local, LISTENER_PUBLIC_HOST.name) == '"Sam"'
    assert raw(database, LISTENER_PUBLIC_HOST.name) is None
    assert raw(database, REPLIES_SEEN_UP_TO.name) is None
    assert settings.get(OPT_OUT_KEYWORDS) == ("STOP", "ENOUGH")
    local.close()


def test_one_desks_file_keeps_both_kinds(own_file: Database) -> None:
    settings = StoredSettings(own_file)
    settings.set(LISTENER_PUBLIC_HOST, "Alex")
    settings.set(TEAM_REPLY_PATH, "https://desk.example.com/r")
    assert raw(own_file, LISTENER_PUBLIC_HOST.name) == '"Alex"'
    assert raw(own_file, TEAM_REPLY_PATH.name) == '"https://desk.example.com/r"'


def test_hostile_text_round_trips_as_it_was(database: Database, own_file: Database) -> None:
    settings = StoredSettings(own_file, database)
    hostile = "100% _'quoted' \"dq\" \\ back; DROP TABLE settings;-- ünïcode ✓"
    settings.set(LISTENER_PUBLIC_HOST, hostile)
    assert settings.get(LISTENER_PUBLIC_HOST) == hostile
    settings.set(OPT_OUT_INSTRUCTION, hostile[:100])
    assert settings.get(OPT_OUT_INSTRUCTION) == hostile[:100]
    with pytest.raises(ValueError, match="control character"):
        settings.set(LISTENER_PUBLIC_HOST, "Sam\x00")
    with pytest.raises(ValueError, match="longer than 253"):
        settings.set(LISTENER_PUBLIC_HOST, "x" * 254)


def test_a_setting_kept_elsewhere_is_refused(database: Database) -> None:
    with pytest.raises(ValueError, match="window state"):
        StoredSettings(database).get(SETTINGS["window.tab"])


def test_a_damaged_value_reads_as_the_default(database: Database, own_file: Database) -> None:
    write_raw(database, OPT_OUT_KEYWORDS.name, "{{{ not json")
    write_raw(own_file, REPLIES_SEEN_UP_TO.name, '"garbage"')
    settings = StoredSettings(own_file, database)
    assert settings.get(OPT_OUT_KEYWORDS) == OPT_OUT_KEYWORDS.default
    assert settings.get(REPLIES_SEEN_UP_TO) == 0


def test_the_watermark_never_goes_back(own_file: Database) -> None:
    settings = StoredSettings(own_file)
    settings.keep_highest(REPLIES_SEEN_UP_TO, 40)
    settings.keep_highest(REPLIES_SEEN_UP_TO, 12)
    assert settings.get(REPLIES_SEEN_UP_TO) == 40
    write_raw(own_file, REPLIES_SEEN_UP_TO.name, '"garbage"')
    settings.keep_highest(REPLIES_SEEN_UP_TO, 7)  # a damaged row counts as lower
    assert settings.get(REPLIES_SEEN_UP_TO) == 7


def test_the_watermark_never_goes_back_under_two_writers(own_file: Database) -> None:
    kind, where = database_address(own_file)
    others = [own_file, database_at(kind, where)]
    values = list(range(1, 401))
    random.Random(16).shuffle(values)
    start = threading.Barrier(2)

    def raise_marks(side: Database, marks: list[int]) -> None:
        settings = StoredSettings(side)
        start.wait()
        for mark in marks:
            settings.keep_highest(REPLIES_SEEN_UP_TO, mark)

    threads = [
        threading.Thread(target=raise_marks, args=(others[n], values[n::2])) for n in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert StoredSettings(own_file).get(REPLIES_SEEN_UP_TO) == 400
    others[1].close()


def _make_once(kind: str, where: str, n: int) -> str:
    database = database_at(kind, where)
    try:
        return StoredSettings(database).made_once(LISTENER_SECRET, lambda: f"secret-{n}")
    finally:
        database.close()


def test_a_value_made_once_by_racing_processes_is_the_first_ones(own_file: Database) -> None:
    kind, where = database_address(own_file)
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        made = pool.starmap(_make_once, [(kind, where, n) for n in range(4)])
    assert len(set(made)) == 1
    assert made[0].startswith("secret-")
    assert StoredSettings(own_file).get(LISTENER_SECRET) == made[0]


def test_an_unusable_value_is_made_again_and_then_kept(own_file: Database) -> None:
    write_raw(own_file, LISTENER_SECRET.name, "42")
    settings = StoredSettings(own_file)
    assert settings.made_once(LISTENER_SECRET, lambda: "fresh") == "fresh"
    assert settings.made_once(LISTENER_SECRET, lambda: "other") == "fresh"
