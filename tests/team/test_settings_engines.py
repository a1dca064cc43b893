"""A profile's settings on both engines: each kept where its declaration says, and the two
writes that must hold across consoles (a watermark that never goes back, a value made
once) holding under writers racing each other."""

from __future__ import annotations

import json
import multiprocessing
import random
import threading
from pathlib import Path

import pytest

from gwdesk.domain.settings import (
    LISTENER_PUBLIC_HOST,
    LISTENER_SECRET,
    OPT_OUT_KEYWORDS,
    REPLIES_SEEN_UP_TO,
    SETTINGS,
    TEAM_REPLY_PATH,
    Place,
    kept_in,
)
from gwdesk.store.database import connect
from gwdesk.store.engine import Database, SqliteDatabase
from gwdesk.store.settings import StoredSettings
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


def test_every_setting_of_the_stores_round_trips(database: Database) -> None:
    settings = StoredSettings(database)
    for setting in KEPT:
        settings.set(setting, SAMPLES[setting.name])
    again = StoredSettings(database)
    assert {s.name: again.get(s) for s in KEPT} == {s.name: SAMPLES[s.name] for s in KEPT}


def test_the_teams_settings_go_to_the_shared_store_and_the_consoles_stay_local(
    database: Database, tmp_path: Path
) -> None:
    local = SqliteDatabase(connect(tmp_path / "local.sqlite3"))
    settings = StoredSettings(local, database)
    settings.set(OPT_OUT_KEYWORDS, ("HALT", "ENOUGH"))
    settings.set(TEAM_REPLY_PATH, "https://replies.example.com/x?f=#FROM#")
    settings.set(LISTENER_PUBLIC_HOST, "Sam")
    settings.set(REPLIES_SEEN_UP_TO, 12)
    assert json.loads(raw(database, OPT_OUT_KEYWORDS.name) or "") == ["HALT", "ENOUGH"]
    assert raw(database, TEAM_REPLY_PATH.name) is not None
    assert raw(local, OPT_OUT_KEYWORDS.name) is None
    assert raw(local, LISTENER_PUBLIC_HOST.name) == '"Sam"'
    assert raw(database, LISTENER_PUBLIC_HOST.name) is None
    assert raw(database, REPLIES_SEEN_UP_TO.name) is None
    assert settings.get(OPT_OUT_KEYWORDS) == ("HALT", "ENOUGH")
    local.close()


def test_one_desks_file_keeps_both_kinds(database: Database) -> None:
    settings = StoredSettings(database)
    settings.set(LISTENER_PUBLIC_HOST, "Alex")
    settings.set(TEAM_REPLY_PATH, "https://desk.example.com/r")
    assert raw(database, LISTENER_PUBLIC_HOST.name) == '"Alex"'
    assert raw(database, TEAM_REPLY_PATH.name) == '"https://desk.example.com/r"'


def test_hostile_text_round_trips_as_it_was(database: Database) -> None:
    settings = StoredSettings(database)
    hostile = "100% _'quoted' \"dq\" \\ back; DROP TABLE settings;-- ünïcode ✓"
    settings.set(LISTENER_PUBLIC_HOST, hostile)
    assert settings.get(LISTENER_PUBLIC_HOST) == hostile
    with pytest.raises(ValueError, match="control character"):
        settings.set(LISTENER_PUBLIC_HOST, "Sam\x00")
    with pytest.raises(ValueError, match="longer than 253"):
        settings.set(LISTENER_PUBLIC_HOST, "x" * 254)


def test_a_setting_kept_elsewhere_is_refused(database: Database) -> None:
    with pytest.raises(ValueError, match="window state"):
        StoredSettings(database).get(SETTINGS["window.tab"])


def test_a_damaged_value_reads_as_the_default(database: Database) -> None:
    write_raw(database, OPT_OUT_KEYWORDS.name, "{{{ not json")
    write_raw(database, REPLIES_SEEN_UP_TO.name, '"garbage"')
    settings = StoredSettings(database)
    assert settings.get(OPT_OUT_KEYWORDS) == OPT_OUT_KEYWORDS.default
    assert settings.get(REPLIES_SEEN_UP_TO) == 0


def test_the_watermark_never_goes_back(database: Database) -> None:
    settings = StoredSettings(database)
    settings.keep_highest(REPLIES_SEEN_UP_TO, 40)
    settings.keep_highest(REPLIES_SEEN_UP_TO, 12)
    assert settings.get(REPLIES_SEEN_UP_TO) == 40
    write_raw(database, REPLIES_SEEN_UP_TO.name, '"garbage"')
    settings.keep_highest(REPLIES_SEEN_UP_TO, 7)  # a damaged row counts as lower
    assert settings.get(REPLIES_SEEN_UP_TO) == 7


def test_the_watermark_never_goes_back_under_two_writers(database: Database) -> None:
    kind, where = database_address(database)
    others = [database, database_at(kind, where)]
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
    assert StoredSettings(database).get(REPLIES_SEEN_UP_TO) == 400
    others[1].close()


def _make_once(kind: str, where: str, n: int) -> str:
    database = database_at(kind, where)
    try:
        return StoredSettings(database).made_once(LISTENER_SECRET, lambda: f"secret-{n}")
    finally:
        database.close()


def test_a_value_made_once_by_racing_processes_is_the_first_ones(database: Database) -> None:
    kind, where = database_address(database)
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        made = pool.starmap(_make_once, [(kind, where, n) for n in range(4)])
    assert len(set(made)) == 1
    assert made[0].startswith("secret-")
    assert StoredSettings(database).get(LISTENER_SECRET) == made[0]


def test_an_unusable_value_is_made_again_and_then_kept(database: Database) -> None:
    write_raw(database, LISTENER_SECRET.name, "42")
    settings = StoredSettings(database)
    assert settings.made_once(LISTENER_SECRET, lambda: "fresh") == "fresh"
    assert settings.made_once(LISTENER_SECRET, lambda: "other") == "fresh"
