"""A team profile: its shared data on the office's server, what is one desk's own in its file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gwdesk.app.profile_data import ProfileData, open_profile
from gwdesk.domain.settings import (
    LISTENER_PORT,
    MARKETING_DEFAULT,
    REPLIES_SEEN_UP_TO,
    TEAM_REPLY_PATH,
)
from gwdesk.store.local import LocalStore
from gwdesk.store.optouts import How
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply
from gwdesk.store.team import Audit
from tests.contract.listener_support import Starter, listen_processes

ACCOUNT = "ops@http://127.0.0.1"
CUSTOMER = "+61412345678"
GWDESK = str(Path(sys.executable).with_name("gwdesk"))


def desk(tmp_path: Path, name: str, url: str, operator: str) -> LocalStore:
    """One workstation's opening of the team profile: its own file, the shared server."""
    data = ProfileData(tmp_path / f"{name}.sqlite3", ACCOUNT, "AU", url, operator)
    return open_profile(data)


@pytest.fixture
def desks(tmp_path: Path, pg_url: str) -> Iterator[tuple[LocalStore, LocalStore]]:
    alex, sam = desk(tmp_path, "alex", pg_url, "Alex"), desk(tmp_path, "sam", pg_url, "Sam")
    yield alex, sam
    alex.close()
    sam.close()


def _reply(text: str, minute: int = 0) -> IncomingReply:
    return IncomingReply(
        CUSTOMER, "+61400000000", text, datetime(2026, 11, 20, 9, minute, tzinfo=UTC)
    )


def test_a_reply_stored_at_one_desk_is_read_at_the_other(
    desks: tuple[LocalStore, LocalStore],
) -> None:
    alex, sam = desks
    alex.replies.add([_reply("Is it still on?")])
    assert [r.text for r in sam.replies.latest()] == ["Is it still on?"]


def test_a_stop_stored_at_one_desk_opts_the_number_out_for_the_other(
    desks: tuple[LocalStore, LocalStore],
) -> None:
    alex, sam = desks
    alex.replies.add([_reply("STOP")])
    found = sam.optouts.get(CUSTOMER.lstrip("+"))
    assert found is not None
    assert found.opted_out
    assert found.how is How.REPLY


def test_an_operators_opt_out_names_them_in_the_list_and_the_audit(
    desks: tuple[LocalStore, LocalStore], pg_url: str
) -> None:
    alex, sam = desks
    alex.optouts.set(CUSTOMER.lstrip("+"), True, reason="asked by phone")
    found = sam.optouts.get(CUSTOMER.lstrip("+"))
    assert found is not None
    assert found.by == "Alex"
    server = PostgresDatabase(pg_url, upgrade=False)
    try:
        entries = Audit(server).entries()
    finally:
        server.close()
    assert [(e.operator, e.console) for e in entries] == [("Alex", alex.console)]


def test_the_teams_settings_are_shared_and_each_desks_stay_its_own(
    desks: tuple[LocalStore, LocalStore],
) -> None:
    alex, sam = desks
    alex.settings.set(MARKETING_DEFAULT, True)
    alex.settings.set(LISTENER_PORT, 9000)
    alex.settings.set(REPLIES_SEEN_UP_TO, 5)
    assert sam.settings.get(MARKETING_DEFAULT) is True
    assert sam.settings.get(LISTENER_PORT) is None
    assert sam.settings.get(REPLIES_SEEN_UP_TO) == 0


def test_a_server_that_cannot_be_reached_is_a_clear_error_and_the_file_is_left_alone(
    tmp_path: Path,
) -> None:
    from gwdesk.store.database import StoreError
    from tests.postgres_server import free_port

    url = f"postgresql://nobody@127.0.0.1:{free_port()}/office"
    with pytest.raises(StoreError, match=r"127\.0\.0\.1"):
        desk(tmp_path, "alex", url, "Alex")


# ---- the office's receiver and the command line -------------------------------------------


@pytest.fixture
def start() -> Iterator[Starter]:
    with listen_processes() as run:
        yield run


def test_the_offices_receiver_stores_replies_on_the_server_and_publishes_its_replypath(
    start: Starter, tmp_path: Path, pg_url: str
) -> None:
    import httpx

    listening = start("--store", pg_url, "--port", "0", "--quiet")
    template = listening.line()
    with httpx.Client() as http:
        called = template.replace("#FROM#", "61412345678").replace("#TO#", "61400000000")
        called = (
            called.replace("#MSG#", "hello%20team")
            .replace("#SENTDTS#", "20-Nov-2026%2009%3A00%3A00")
            .replace("#RCVDDTS#", "20-Nov-2026%2009%3A00%3A00")
        )
        assert http.get(called).text == "OK"
    sam = desk(tmp_path, "sam", pg_url, "Sam")
    try:
        assert [r.text for r in sam.replies.latest()] == ["hello team"]
        assert sam.settings.get(TEAM_REPLY_PATH) == template
    finally:
        sam.close()


def test_gwdesk_replies_lists_the_servers_replies_one_json_object_a_line(
    desks: tuple[LocalStore, LocalStore], pg_url: str
) -> None:
    alex, _sam = desks
    alex.replies.add([_reply("first", 0), _reply("second", 1)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    done = subprocess.run(
        [GWDESK, "replies", "--store", pg_url, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["text"], r["from"]) for r in rows] == [("first", CUSTOMER), ("second", CUSTOMER)]
