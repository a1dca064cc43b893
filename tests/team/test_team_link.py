"""A console's link to its team's server: presence, the change feed and typing notes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gwdesk.app.team import Member, TeamLink, conversation_subject
from gwdesk.domain.operator import operator_name
from gwdesk.store.changes import RESYNC
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.team import Presence
from tests.postgres_server import PostgresServer
from tests.team.support import Heard


@pytest.fixture
def server(pg_url: str) -> Iterator[PostgresDatabase]:
    database = PostgresDatabase(pg_url)
    yield database
    database.close()


def _link(database: PostgresDatabase, heard: Heard, operator: str, **kw: float) -> TeamLink:
    return TeamLink(
        database,
        Member(operator),
        on_change=heard.on_change,
        on_state=heard.on_state,
        connect=database.connect,
        **kw,
    ).start()


def test_a_started_link_is_live_under_its_operator_and_gone_once_closed(
    server: PostgresDatabase,
) -> None:
    link = _link(server, Heard(), "Alex Doe")
    assert [(c.operator, c.id) for c in Presence(server).live()] == [
        ("Alex Doe", link.member.console)
    ]
    link.close()
    assert Presence(server).live() == []


def test_a_link_is_told_to_read_everything_when_it_connects(server: PostgresDatabase) -> None:
    heard = Heard()
    link = _link(server, heard, "alex")
    try:
        heard.wait_for(RESYNC)
        heard.wait_for_states([True])
    finally:
        link.close()


def test_another_clients_commit_names_its_table(server: PostgresDatabase) -> None:
    heard = Heard()
    link = _link(server, heard, "alex")
    try:
        seen = heard.wait_for(RESYNC)
        Presence(server).arrive("b", "sam", "desk-2", "0.2.0")
        heard.wait_for("consoles", after=seen)
    finally:
        link.close()


def test_each_operator_sees_the_other_typing_to_the_same_customer(
    server: PostgresDatabase,
) -> None:
    alex, sam = _link(server, Heard(), "alex"), _link(server, Heard(), "sam")
    subject = conversation_subject("+61412345678")
    try:
        alex.typing(subject)
        assert [c.operator for c in sam.typists(subject)] == ["alex"]
        assert alex.typists(subject) == []
        alex.done_typing(subject)
        assert sam.typists(subject) == []
    finally:
        alex.close()
        sam.close()


def test_a_typing_note_reaches_the_other_console_as_a_change(server: PostgresDatabase) -> None:
    heard = Heard()
    alex, sam = _link(server, Heard(), "alex"), _link(server, heard, "sam")
    try:
        seen = heard.wait_for(RESYNC)
        alex.typing(conversation_subject("+61412345678"))
        heard.wait_for("claims", after=seen)
    finally:
        alex.close()
        sam.close()


def test_a_restarted_server_is_told_as_a_disconnection_then_a_resync(
    postgres: PostgresServer, server: PostgresDatabase
) -> None:
    heard = Heard()
    link = _link(server, heard, "alex", heartbeat=0.2)
    try:
        heard.wait_for_states([True])
        seen = heard.wait_for(RESYNC)
        postgres.restart()
        heard.wait_for_states([True, False, True])
        heard.wait_for(RESYNC, after=seen)
        assert [c.id for c in Presence(server).live()] == [link.member.console]
    finally:
        link.close()


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ("  Alex   Doe ", "Alex Doe"),
        ("sam\x1b[31m\nred", "sam [31m red"),
        ("\u202eevil", "evil"),
        ("x" * 500, "x" * 100),
        ("", ""),
    ],
)
def test_an_operator_name_is_one_printable_bounded_line(given: str, shown: str) -> None:
    assert operator_name(given) == shown
