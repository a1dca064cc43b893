"""One pipeline: the same message sent from the console's Send tab and from `gwdesk send`.

Both reach the gateway through the application core (`Sending`) and its outbox
runner, over the same profile's store file: what each recorded in the outbox must
be the same, field by field, but for ids, times and generated ExternalSystemIds
(which must have the same shape); and each wrote the same history row.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from gwdesk.domain.models import Secret
from gwdesk.domain.profile import Profile
from gwdesk.profiles import ProfileStore
from gwdesk.sandbox.server import SandboxThread
from gwdesk.ui.widgets.reply_options import ReplyMode
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.send_support import fill, send_and_wait, send_tab

GWDESK = str(Path(sys.executable).with_name("gwdesk"))
NUMBER = "0412 345 678"
TEXT = "Your order is ready: collect it today ✓"
SENDER = "ACME"
TAGS = "orders, ready"
REPLY_TYPE = "HTTPPOST"
REPLY_PATH = "https://hooks.example.com/sms?from=#FROM#&text=#MSG#"
SEND_ID = re.compile(r"gwd-\d{8}T\d{6}Z-[0-9a-f]{12}")
#: Values each send makes anew: compared by shape below, not by value.
BATCH_OWN = ("id", "send_id", "created_us", "updated_us")
ENTRY_OWN = ("id", "batch_id", "external_system_id", "message_id", "created_us", "updated_us")
ENTRY_TIMES = ("sent_us",)


def fields(record: Any, leave_out: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(record).items() if k not in leave_out}


def gwdesk_send() -> subprocess.CompletedProcess[str]:
    """`gwdesk send` of the same message, as a real process, with the console's profile."""
    env = {**os.environ, "GWDESK_PASSWORD": "demo"}
    command = [
        GWDESK, "send", "--profile", "Office", "--to", NUMBER, "--from", SENDER,
        "--tags", TAGS, "--reply-type", REPLY_TYPE, "--reply-path", REPLY_PATH, TEXT,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)


async def test_the_send_tab_and_gwdesk_send_record_the_same_outbox_entry(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    profile = Profile(
        name="Office",
        rest_url=sandbox.rest_url,
        username="demo",
        timezone=sandbox.config.timezone,
    )
    ProfileStore().save(profile)
    tab = await send_tab(ui, qtbot)
    await ui.session.activate(profile, Secret("demo"))
    fill(tab, NUMBER, TEXT)
    tab.form.sender_edit.setText(SENDER)
    tab.form.tags.setText(TAGS)
    tab.form.replies.set_mode(ReplyMode.TWO_WAY)
    tab.form.replies.set_reply_type(REPLY_TYPE)
    tab.form.replies.path_edit.setText(REPLY_PATH)
    started = datetime.now(UTC) - timedelta(minutes=1)
    await send_and_wait(tab)
    assert tab.status_label.text().startswith("Sent"), tab.status_label.text()

    done = await asyncio.to_thread(gwdesk_send)  # the console keeps the file open meanwhile
    assert done.returncode == 0, done.stderr

    store = ui.session.store
    assert store is not None
    console, cli = sorted(store.outbox.batches(open_only=False), key=lambda b: b.id)
    assert fields(cli, BATCH_OWN) == fields(console, BATCH_OWN)
    assert (console.channel, console.label, console.closed) == ("sms", TEXT, True)
    assert console.gateway == f"demo@{sandbox.rest_url.lower()}"
    assert SEND_ID.fullmatch(console.send_id)
    assert SEND_ID.fullmatch(cli.send_id)
    assert console.send_id != cli.send_id

    [from_tab] = store.outbox.entries(console.id)
    [from_cli] = store.outbox.entries(cli.id)
    assert fields(from_cli, ENTRY_OWN + ENTRY_TIMES) == fields(from_tab, ENTRY_OWN + ENTRY_TIMES)
    assert (from_tab.seq, from_tab.recipients, from_tab.state.value) == (
        1,
        ("61412345678",),
        "lodged",
    )
    assert (from_tab.own_id, from_tab.found, from_tab.attempts) == (True, 1, 1)
    assert from_tab.body == {
        "text": TEXT,
        "source": SENDER,
        "send_at": None,
        "reply_type": REPLY_TYPE,
        "reply_path": REPLY_PATH,
        "external_id": None,
        "tags": "orders,ready",
    }
    assert from_tab.sent_us is not None
    assert from_cli.sent_us is not None
    # Each generated ExternalSystemId is its send's id and request number, and named a message.
    assert from_tab.external_system_id == f"{console.send_id}-0001"
    assert from_cli.external_system_id == f"{cli.send_id}-0001"
    lodged = dict(sandbox.query("SELECT external_system_id, message_id FROM messages"))
    assert lodged == {
        from_tab.external_system_id: from_tab.message_id,
        from_cli.external_system_id: from_cli.message_id,
    }

    # Each wrote its history row, the same but for the time and what the gateway named.
    await wait_until(lambda: len(store.history.since(started)) == 2, 10, "both history rows")
    rows = sorted(store.history.since(started), key=lambda row: row.id or 0)
    own = ("id", "at", "message_id", "external_system_id")
    tab_row, cli_row = (fields(row, own) for row in rows)
    assert cli_row == tab_row
    assert (tab_row["channel"], tab_row["recipients"], tab_row["ok"]) == (
        "SMS (REST)",
        "61412345678",
        True,
    )
    assert [row.external_system_id for row in rows] == [
        from_tab.external_system_id,
        from_cli.external_system_id,
    ]
