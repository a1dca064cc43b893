"""Drafts and send history never wait on the profile file's write lock, and none is lost.

Another connection (in life: `gwdesk send`, `gwdesk outbox resume`, a second console)
holds the file's write lock while the operator types, or while a send completes
and is recorded. A QTimer ticking every 10 ms on the GUI thread must keep ticking
(no gap over `STALL`), nothing may reach the error reporter, and once the lock is
let go the draft and the history row must be in the file. Drafts typed just before
a profile switch or a restart are there afterwards.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from gwdesk.domain.models import Secret
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.history import HistoryEntry
from gwdesk.store.local import LocalStore
from gwdesk.ui.batch import tab as batch
from gwdesk.ui.batch.tab import BatchTab
from gwdesk.ui.controller import default_service_factory, sandbox_profile
from gwdesk.ui.sandbox_process import SandboxAddresses
from gwdesk.ui.send import tab as send
from gwdesk.ui.send.tab import SendTab
from gwdesk.ui.session import Session
from gwdesk.ui.status_bar import GatewayStatusBar
from tests.sqlite_locks import HeldLock
from tests.ui.conftest import UiBundle, wait_until
from tests.ui.lock_support import Heartbeat, while_locked
from tests.ui.send_support import fill, send_tab

HOLD = 1.5
"""Seconds the other connection keeps the write lock: longer than either draft timer."""
STALL = 0.5
"""The longest the GUI thread may go without a heartbeat tick (a generous bound)."""


def read_file(path: Path | str, sql: str, *args: object) -> list[tuple[Any, ...]]:
    """Rows read from the file itself by a connection of its own (not the store's view)."""
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


async def draft_in_file(path: Path | str, key: str) -> dict[str, Any]:
    rows = await asyncio.to_thread(read_file, path, "SELECT value FROM drafts WHERE key = ?", key)
    return json.loads(rows[0][0]) if rows else {}


def other_profile(sandbox: SandboxThread) -> Any:
    profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
    return profile.model_copy(update={"name": "Second desk"})


async def test_typing_a_send_draft_while_the_file_is_locked_keeps_the_gui_running(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None

    async def type_draft() -> None:
        qtbot.keyClicks(tab.form.editor.edit, "Typed while locked")
        await wait_until(lambda: not tab._draft_timer.isActive(), 3, "the draft timer")
        assert (await draft_in_file(store.path, send.DRAFT_KEY)).get("text") is None
        await store.writer.flushed()

    locked = await while_locked(store.path, type_draft, HOLD)
    assert locked.waited
    assert locked.longest_stall < STALL
    assert (await draft_in_file(store.path, send.DRAFT_KEY))["text"] == "Typed while locked"
    assert not ui.reporter.errors


async def test_typing_a_batch_draft_while_the_file_is_locked_keeps_the_gui_running(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    store = ui.session.store
    assert store is not None
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)

    async def type_draft() -> None:
        qtbot.keyClicks(tab.compose.editor.edit, "Batch typed while locked")
        await wait_until(lambda: not tab._draft_timer.isActive(), 3, "the draft timer")
        assert (await draft_in_file(store.path, batch.DRAFT_KEY)).get("text") is None
        await store.writer.flushed()

    locked = await while_locked(store.path, type_draft, HOLD)
    assert locked.waited
    assert locked.longest_stall < STALL
    assert (await draft_in_file(store.path, batch.DRAFT_KEY))["text"] == "Batch typed while locked"
    assert not ui.reporter.errors


class LockBeforeTheHistoryRow:
    """Takes the file's write lock, as another process would, the moment the send hands its
    history row to the store's writer: the gateway has answered and the outbox has written.

    Taken on the GUI thread before the row is handed over, so the writer cannot have
    written it first (taking the lock when the Send button came back raced the writer).
    """

    def __init__(self, store: LocalStore) -> None:
        self.lock: HeldLock | None = None
        queue = store.history.queue

        def locked_first(entry: HistoryEntry) -> Future[HistoryEntry]:
            if self.lock is None:
                self.lock = HeldLock(store.path, release_after=HOLD)
            return queue(entry)

        store.history.queue = locked_first  # type: ignore[method-assign]


async def test_a_send_recorded_while_the_file_is_locked_keeps_the_gui_running(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None
    locker = LockBeforeTheHistoryRow(store)
    fill(tab, "0412 345 678", "Recorded while locked")
    heartbeat = Heartbeat()
    heartbeat.start()
    try:
        tab.send()
        await wait_until(lambda: not tab.sending(), 20, "the send")
        assert locker.lock is not None
        assert await asyncio.to_thread(read_file, store.path, "SELECT text FROM history") == []
        await store.writer.flushed()
        written = time.monotonic()
    finally:
        if locker.lock is not None:
            locker.lock.close()
        heartbeat.stop()
    assert locker.lock.released_at is not None
    assert written >= locker.lock.released_at
    assert heartbeat.longest < STALL
    rows = await asyncio.to_thread(read_file, store.path, "SELECT text, ok FROM history")
    assert rows == [("Recorded while locked", 1)]
    assert [e.text for e in tab.history.entries()] == ["Recorded while locked"]
    assert not ui.reporter.errors


async def test_many_draft_edits_while_locked_write_only_the_newest_text(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None
    await asyncio.to_thread(
        lambda: sqlite3.connect(str(store.path), isolation_level=None).executescript(
            """
            CREATE TABLE draft_writes (value TEXT NOT NULL);
            CREATE TRIGGER draft_inserted AFTER INSERT ON drafts
            BEGIN INSERT INTO draft_writes VALUES (new.value); END;
            CREATE TRIGGER draft_updated AFTER UPDATE ON drafts
            BEGIN INSERT INTO draft_writes VALUES (new.value); END;
            """
        )
    )
    lock = HeldLock(store.path, release_after=HOLD)
    try:
        for word in ("one", " two", " three", " four", " five"):
            qtbot.keyClicks(tab.form.editor.edit, word)
            tab.save_draft()  # what the timer does after each pause in typing
        await store.writer.flushed()
    finally:
        lock.close()
    writes = await asyncio.to_thread(read_file, store.path, "SELECT value FROM draft_writes")
    assert [json.loads(value)["text"] for (value,) in writes] == ["one two three four five"]


async def test_a_send_draft_typed_just_before_a_profile_switch_is_there_when_switching_back(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    qtbot.keyClicks(tab.form.editor.edit, "Typed just before switching")
    await ui.session.activate(other_profile(sandbox), Secret("demo"))
    assert tab.form.editor.text() == ""  # the other profile's (empty) draft
    await ui.connect(sandbox)
    assert tab.form.editor.text() == "Typed just before switching"


async def test_a_batch_draft_typed_just_before_a_profile_switch_is_there_when_switching_back(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    await ui.connect(sandbox)
    tab = BatchTab(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(tab)
    qtbot.keyClicks(tab.compose.editor.edit, "Batch typed just before switching")
    await ui.session.activate(other_profile(sandbox), Secret("demo"))
    assert tab.compose.editor.text() == ""
    await ui.connect(sandbox)
    assert tab.compose.editor.text() == "Batch typed just before switching"


async def test_a_new_session_on_the_same_file_restores_the_newest_draft(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    qtbot.keyClicks(tab.form.editor.edit, "First words")
    tab.save_draft()
    qtbot.keyClicks(tab.form.editor.edit, ", then the newest")
    await ui.session.close()  # the console quits before the draft timer fires
    restarted = Session(ui.paths, default_service_factory)
    try:
        profile = sandbox_profile(SandboxAddresses(sandbox.rest_url, sandbox.lodge_url))
        await restarted.activate(profile, Secret("demo"), sandbox=True)
        again = SendTab(restarted, ui.tasks, ui.theme)
        qtbot.addWidget(again)
        assert again.form.editor.text() == "First words, then the newest"
    finally:
        await restarted.close()


async def test_a_draft_that_cannot_be_saved_is_reported_once_and_stays_in_the_editor(
    ui: UiBundle, sandbox: SandboxThread, qtbot: QtBot
) -> None:
    tab = await send_tab(ui, qtbot, sandbox)
    store = ui.session.store
    assert store is not None
    bar = GatewayStatusBar(ui.session, ui.tasks, ui.theme)
    qtbot.addWidget(bar)
    await wait_until(lambda: not ui.tasks.running("balance", owner=bar), 10, "the balance")
    reports: list[tuple[str, bool]] = []
    ui.session.activity.connect(lambda what, ok: reports.append((what, ok)))
    store.writer.retry_for = 0.3
    lock = HeldLock(store.path)
    try:
        for words in ("Kept", " in the editor"):
            qtbot.keyClicks(tab.form.editor.edit, words)
            tab.save_draft()
            await store.writer.flushed()  # given up after 0.3 s
        await wait_until(lambda: reports, 3, "the report")
        assert bar.connection_label.text().startswith("Trouble: The draft could not be saved")
        # The writer reports from its thread before the write's flush settles; a marker
        # sent the same way after that arrives behind any report of either write.
        on_failure = store.writer.on_failure
        assert on_failure is not None
        await asyncio.to_thread(on_failure, "marker")
        await wait_until(lambda: ("marker", False) in reports, 3, "the marker")
    finally:
        lock.close()
    assert reports == [
        (
            "The draft could not be saved: the profile's file stayed locked by another "
            "program for 0.3 s.",
            False,
        ),
        ("marker", False),
    ]
    assert tab.form.editor.text() == "Kept in the editor"
    assert not ui.reporter.errors
