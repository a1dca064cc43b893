"""The team's server stopped and started again under an office's feet: the receiver answers
only what it stored, the gateway retries, both consoles say they were cut off, then catch up.

Real parts throughout: a PostgreSQL server of the test's own, `gwdesk listen --store` as a
process, the sandbox gateway delivering reply webhooks (and retrying them), and two
consoles' openings of the team profile, each with its change feed (`TeamLink`) and the
reply catch-up its Replies view runs (`ReplyCatchUp`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gwdesk.app.catch_up import ReplyCatchUp
from gwdesk.app.profile_data import ProfileData, open_profile
from gwdesk.app.team import Member, TeamLink
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.local import LocalStore
from gwdesk.store.shared import ServerData
from tests.conftest import SandboxFactory
from tests.contract.listener_support import Starter, listen_processes
from tests.postgres_server import PostgresServer
from tests.sandbox.webhook_receiver import make_reply, wait_for_attempts, wait_until_delivered
from tests.team.support import Heard

GWDESK = str(Path(sys.executable).with_name("gwdesk"))
PASSWORD = "team-S3cret-pw"


@dataclass
class Console:
    """One desk: its opening of the team profile, its feed, and the replies it has read."""

    store: LocalStore
    heard: Heard
    link: TeamLink
    catch_up: ReplyCatchUp
    read: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def catch_up_now(self) -> list[str]:
        with self.lock:
            self.read.extend(r.text for r in self.catch_up.read())
            return list(self.read)


def open_console(tmp_path: Path, name: str, url: str) -> Console:
    store = open_profile(ProfileData(tmp_path / f"{name}.sqlite3", "ops@sandbox", "AU", url, name))
    assert isinstance(store.shared, ServerData)
    database = store.shared.database
    heard = Heard()
    catch_up = ReplyCatchUp(store.replies)
    link = TeamLink(
        database,
        Member(name, console=store.console),
        on_change=heard.on_change,
        on_state=heard.on_state,
        connect=database.connect,  # type: ignore[attr-defined]
        heartbeat=0.5,
    ).start()
    return Console(store, heard, link, catch_up)


@pytest.fixture
def gateway(sandbox_factory: SandboxFactory) -> SandboxThread:
    return sandbox_factory(extra_accounts=[("ops", PASSWORD)])


@pytest.fixture
def start() -> Iterator[Starter]:
    with listen_processes() as run:
        yield run


def two_way(gateway: SandboxThread, template: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GWDESK_")}
    env["GWDESK_DATA_DIR"] = os.environ["GWDESK_DATA_DIR"]
    env["GWDESK_PASSWORD"] = PASSWORD
    sent = subprocess.run(
        [GWDESK, "send", "Any question? Just reply.", "--to", "0412 345 678",
         "--base-url", gateway.rest_url, "--username", "ops",
         "--reply-type", "HTTP", "--reply-path", template, "--json"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    message_id: str = json.loads(sent.stdout)["requests"][0]["message"]["MessageId"]
    return message_id


def until_read(console: Console, text: str) -> None:
    """Read past every notification (a change, or the resync after a reconnection) until
    `text` is among what this console read, as the Replies view does."""
    seen = 0
    while text not in console.catch_up_now():
        seen = console.heard.wait_for_more(after=seen)


def test_a_server_restart_loses_no_acknowledged_reply_and_both_consoles_catch_up(
    lone_postgres: PostgresServer,
    gateway: SandboxThread,
    start: Starter,
    tmp_path: Path,
) -> None:
    url = lone_postgres.create_database("office")
    listening = start("--store", url, "--port", "0", "--json")
    template = listening.line()
    alex, sam = open_console(tmp_path, "alex", url), open_console(tmp_path, "sam", url)
    try:
        message_id = two_way(gateway, template)
        first = make_reply(gateway, message_id=message_id, text="before the outage")
        assert wait_until_delivered(gateway, first["ReplyId"])[-1]["Ok"]
        for console in (alex, sam):
            until_read(console, "before the outage")

        lone_postgres.stop()
        for console in (alex, sam):
            console.heard.wait_for_states([True, False])
        second = make_reply(gateway, message_id=message_id, text="during the outage")
        refused = wait_for_attempts(gateway, second["ReplyId"], 1, timeout=30)[0]
        assert not refused["Ok"]  # the receiver stored nothing, so it said so

        lone_postgres.start()
        for console in (alex, sam):
            console.heard.wait_for_states([True, False, True])
        delivered = wait_until_delivered(gateway, second["ReplyId"], timeout=60)
        assert delivered[-1]["Ok"]  # a retry after the restart was stored and acknowledged
        for console in (alex, sam):
            until_read(console, "during the outage")
            assert console.catch_up_now().count("during the outage") == 1
        acknowledged = {"before the outage", "during the outage"}
        assert {r.text for r in alex.store.replies.latest()} == acknowledged
    finally:
        for console in (alex, sam):
            console.link.close()
            console.store.close()
