"""Every setting declared once (`gwdesk.domain.settings`): each round-trips through the place
that keeps it, reads as its default where nothing is kept, and a garbled value (a file
edited by hand, a damaged one, an older gwdesk's) reads as the default without an error.

The window state's settings are tested with Qt in `tests/ui/test_window_state.py`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.domain.profile import Profile
from gwdesk.domain.settings import (
    DEFAULT_PROFILE,
    LISTENER_PORT,
    LISTENER_SECRET,
    REPLIES_SEEN_UP_TO,
    SETTINGS,
    Place,
    Setting,
    kept_in,
)
from gwdesk.profiles import ProfileStore
from gwdesk.store.local import LocalStore
from gwdesk.store.reader import StoreReader
from tests.settings_support import GARBLED, SAMPLES


def test_every_setting_is_declared_once_with_what_it_does() -> None:
    assert set(SAMPLES) == set(SETTINGS)
    for name, setting in SETTINGS.items():
        assert setting.name == name
        assert setting.about.endswith(".")
        assert 20 <= len(setting.about) <= 120, name  # one sentence
    for place in Place:
        keys = [s.stored_as for s in kept_in(place)]
        assert len(keys) == len(set(keys)), place


def test_every_sample_is_allowed_and_differs_from_the_default() -> None:
    for name, value in SAMPLES.items():
        setting = SETTINGS[name]
        assert setting.write(value) == value
        assert setting.read(value) == value
        assert value != setting.default


def test_every_setting_reads_nothing_as_its_default() -> None:
    for setting in SETTINGS.values():
        assert setting.read(None) == setting.default


@pytest.mark.parametrize("garbage", GARBLED, ids=repr)
def test_a_garbled_value_reads_as_the_default(garbage: object) -> None:
    for setting in SETTINGS.values():
        value = setting.read(garbage)
        assert value == setting.default or value == garbage, setting.name
        assert setting.write(value) == value, setting.name  # whatever is read is allowed


def test_a_value_outside_the_declaration_is_refused_when_written() -> None:
    with pytest.raises(ValueError, match="outside"):
        LISTENER_PORT.write(70000)
    with pytest.raises(ValueError, match="whole number"):
        REPLIES_SEEN_UP_TO.write("twelve")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="control character"):
        DEFAULT_PROFILE.write("Work\nrm -rf")


# ---- the profile's store -----------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LocalStore]:
    store = LocalStore(tmp_path / "profile.sqlite3")
    yield store
    store.close()


def raw_rows(path: Path | str, rows: dict[str, str]) -> None:
    """Write `settings` rows as they are, past every check (a damaged or hand-edited file)."""
    conn = sqlite3.connect(str(path))
    conn.executemany("INSERT OR REPLACE INTO settings(name, value) VALUES (?, ?)", rows.items())
    conn.commit()
    conn.close()


def test_every_store_setting_round_trips_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    kept = kept_in(Place.PROFILE_STORE)
    assert kept
    first = LocalStore(path)
    try:
        for setting in kept:
            first.settings.set(setting, SAMPLES[setting.name])
    finally:
        first.close()
    again = LocalStore(path)
    try:
        for setting in kept:
            assert again.settings.get(setting) == SAMPLES[setting.name], setting.name
        with StoreReader(path) as reader:  # a reader off the GUI thread reads the same
            read = reader.run(lambda reading: {s.name: reading.get(s) for s in kept})
        assert read == {s.name: SAMPLES[s.name] for s in kept}
    finally:
        again.close()


def test_a_new_store_reads_every_setting_as_its_default(store: LocalStore) -> None:
    for setting in kept_in(Place.PROFILE_STORE):
        assert store.settings.get(setting) == setting.default


@pytest.mark.parametrize("garbage", GARBLED, ids=repr)
def test_a_garbled_store_value_reads_as_the_default(store: LocalStore, garbage: object) -> None:
    kept = kept_in(Place.PROFILE_STORE)
    raw_rows(store.path, {s.name: json.dumps(garbage) for s in kept})
    for setting in kept:
        value = store.settings.get(setting)
        assert value == setting.default or value == garbage, setting.name
        assert setting.write(value) == value, setting.name  # whatever is read is allowed


def test_a_store_value_that_is_not_json_reads_as_the_default(store: LocalStore) -> None:
    raw_rows(store.path, {"listener.port": "{{{", "listener.enabled": "maybe"})
    assert store.settings.get(LISTENER_PORT) is None
    assert store.settings.get(SETTINGS["listener.enabled"]) is True


def test_a_setting_kept_elsewhere_is_not_read_from_the_store(store: LocalStore) -> None:
    with pytest.raises(ValueError, match="window state"):
        store.settings.get(SETTINGS["window.tab"])


def test_the_seen_watermark_never_goes_back(store: LocalStore) -> None:
    store.settings.keep_highest(REPLIES_SEEN_UP_TO, 40)
    store.settings.keep_highest(REPLIES_SEEN_UP_TO, 12)  # another window, behind
    assert store.settings.get(REPLIES_SEEN_UP_TO) == 40
    raw_rows(store.path, {REPLIES_SEEN_UP_TO.name: '"garbage"'})
    store.settings.keep_highest(REPLIES_SEEN_UP_TO, 7)
    assert store.settings.get(REPLIES_SEEN_UP_TO) == 7


def test_a_value_made_once_is_kept_by_whoever_made_it_first(tmp_path: Path) -> None:
    path = tmp_path / "profile.sqlite3"
    stores = [LocalStore(path) for _ in range(4)]
    start = threading.Barrier(len(stores))
    made: list[str] = []

    def make(store: LocalStore, n: int) -> None:
        start.wait()
        made.append(store.replies.settings.made_once(LISTENER_SECRET, lambda: f"secret-{n}"))

    threads = [threading.Thread(target=make, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(set(made)) == 1
        assert stores[0].settings.get(LISTENER_SECRET) == made[0]
    finally:
        for store in stores:
            store.close()


def test_an_unusable_secret_is_made_again(store: LocalStore) -> None:
    raw_rows(store.path, {LISTENER_SECRET.name: "42"})
    secret = store.replies.secret()
    assert len(secret) == 32
    assert store.replies.secret() == secret


# ---- the profiles file -------------------------------------------------------------------------


def profile(name: str) -> Profile:
    return Profile(name=name, rest_url="https://gateway.example.com", username="ops")


def test_the_default_profile_round_trips_through_the_profiles_file(tmp_path: Path) -> None:
    assert kept_in(Place.PROFILES_FILE) == [DEFAULT_PROFILE]
    ProfileStore(tmp_path).save(profile(SAMPLES[DEFAULT_PROFILE.name]))
    ProfileStore(tmp_path).set_default(SAMPLES[DEFAULT_PROFILE.name])
    assert ProfileStore(tmp_path).default_name == SAMPLES[DEFAULT_PROFILE.name]
    document = json.loads((tmp_path / "profiles.json").read_text(encoding="utf-8"))
    assert document[DEFAULT_PROFILE.stored_as] == "Work"  # where older versions keep it too


def test_a_new_profiles_file_has_no_default(tmp_path: Path) -> None:
    assert ProfileStore(tmp_path).default_name is DEFAULT_PROFILE.default


@pytest.mark.parametrize("garbage", GARBLED, ids=repr)
def test_a_garbled_default_profile_reads_as_none(tmp_path: Path, garbage: object) -> None:
    store = ProfileStore(tmp_path)
    store.save(profile("Work"))
    document = json.loads(store.path.read_text(encoding="utf-8"))
    document[DEFAULT_PROFILE.stored_as] = garbage
    store.path.write_text(json.dumps(document), encoding="utf-8")
    value = store.default_name
    assert value is None or value == garbage


def test_settings_are_declared_as_settings() -> None:
    assert all(isinstance(s, Setting) for s in SETTINGS.values())
