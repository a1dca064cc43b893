"""A team setting's change in words, and reading the changes past the last one told
(over a profile's own file: the same `Audit` a team's server is read through)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gwdesk.app.setting_changes import WORDS, SettingChanges, change_text
from gwdesk.domain.settings import (
    MARKETING_DEFAULT,
    OPT_IN_KEYWORDS,
    OPT_OUT_INSTRUCTION,
    OPT_OUT_KEYWORDS,
    TEAM_REPLY_PATH,
    Place,
    kept_in,
)
from gwdesk.store.engine import Database
from gwdesk.store.pg_reply_rules import SETTING_NAMES
from gwdesk.store.shared import FileData
from gwdesk.store.team import SETTING_CHANGED, Audit, write_audit

REPLY_PATH = "https://receiver.example.com/replies/s3cr3t-Segment/{messageId}"


def test_every_team_setting_has_its_words_and_only_those() -> None:
    team = {setting.name for setting in kept_in(Place.SHARED_STORE)}
    assert set(WORDS) == team == set(SETTING_NAMES)


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [
        (OPT_OUT_KEYWORDS.name, ["STOP", "halt"], "Alex changed the opt-out keywords: STOP, HALT"),
        (OPT_IN_KEYWORDS.name, ["START"], "Alex changed the opt-in keywords: START"),
        (MARKETING_DEFAULT.name, True, "Alex turned marketing on by default"),
        (MARKETING_DEFAULT.name, False, "Alex turned marketing off by default"),
        (
            OPT_OUT_INSTRUCTION.name,
            "Text STOP to end",
            "Alex changed the opt-out instruction to “Text STOP to end”",
        ),
        (TEAM_REPLY_PATH.name, REPLY_PATH, "The reply receiver published a new ReplyPath"),
        (
            TEAM_REPLY_PATH.name,
            None,
            "The reply receiver withdrew its ReplyPath: two-way sends wait for a new one",
        ),
    ],
)
def test_a_change_is_said_in_plain_words(setting: str, value: object, said: str) -> None:
    assert change_text("Alex", setting, json.dumps(value)) == said


def test_the_receivers_replypath_is_never_repeated() -> None:
    text = change_text("Receiver", TEAM_REPLY_PATH.name, json.dumps(REPLY_PATH))
    assert "s3cr3t" not in text
    assert "https" not in text


@pytest.mark.parametrize(
    "detail",
    ['["STOP", "HA', "{}", '"STOP"', "[1, 2]", "not json", '["' + "X" * 41 + '"]'],
)
def test_a_value_that_does_not_read_as_declared_is_left_out_not_shown_raw(detail: str) -> None:
    assert change_text("Sam", OPT_OUT_KEYWORDS.name, detail) == ("Sam changed the opt-out keywords")


def test_a_setting_this_gwdesk_does_not_know_is_named_shortened() -> None:
    name = "future.setting " + "x" * 100
    said = change_text("Sam", name, "1")
    assert said.startswith("Sam changed the team setting future.setting xxx")
    assert len(said) == len("Sam changed the team setting ") + 60


def test_a_nameless_change_is_someones() -> None:
    assert change_text("  ", MARKETING_DEFAULT.name, "true") == (
        "Someone turned marketing on by default"
    )


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    opened = FileData(tmp_path / "profile.sqlite").open()
    yield opened
    opened.close()


def audited(database: Database, action: str, subject: str, detail: str, who: str = "Alex") -> None:
    with database.transaction() as session:
        write_audit(session, who, "desk-1", action, subject, detail)


def test_changes_made_before_the_first_read_are_not_told_and_later_ones_are_once(
    database: Database,
) -> None:
    audited(database, SETTING_CHANGED, MARKETING_DEFAULT.name, "true")
    changes = SettingChanges(Audit(database), page=2)

    assert changes.read() == []  # it starts from here
    for word in ("HALT", "QUIT", "END"):
        audited(database, SETTING_CHANGED, OPT_OUT_KEYWORDS.name, json.dumps(["STOP", word]))
        audited(database, "sent", "+61412345678", "Hello")  # not a setting's change
    audited(database, SETTING_CHANGED, MARKETING_DEFAULT.name, "false", who="Sam")

    told = changes.read()

    assert [change.text for change in told] == [
        "Alex changed the opt-out keywords: STOP, HALT",
        "Alex changed the opt-out keywords: STOP, QUIT",
        "Alex changed the opt-out keywords: STOP, END",
        "Sam turned marketing off by default",
    ]
    assert [change.operator for change in told] == ["Alex", "Alex", "Alex", "Sam"]
    assert told[-1].setting == MARKETING_DEFAULT.name
    assert changes.read() == []


def test_begin_starts_from_the_records_last_entry(database: Database) -> None:
    audited(database, SETTING_CHANGED, MARKETING_DEFAULT.name, "true")
    changes = SettingChanges(Audit(database))
    changes.begin()
    audited(database, SETTING_CHANGED, MARKETING_DEFAULT.name, "false")

    assert [change.text for change in changes.read()] == ["Alex turned marketing off by default"]
