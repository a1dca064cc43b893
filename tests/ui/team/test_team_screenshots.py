"""Pictures of team mode at 1280x800, saved with `GWDESK_SCREENSHOTS`: a conversation
three desks share (each sent message with its operator, a colleague typing), the
status bar with the consoles connected, and the same console once the server stopped;
and the status bar's notice of a team setting's change on the small screens (1024x700,
1366x768), every item still in view."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PySide6.QtCore import QSize

from gwdesk.app.optouts import read_rules, save_rules
from gwdesk.sandbox.server import SandboxThread
from gwdesk.store.postgres import PostgresDatabase
from gwdesk.store.replies import IncomingReply
from gwdesk.ui.controller import default_tabs
from tests.postgres_server import PostgresServer
from tests.team.logins import office_logins
from tests.ui.conftest import wait_until
from tests.ui.plain_text_support import tooltip_shows
from tests.ui.replies_support import CUSTOMER
from tests.ui.screenshot_support import WINDOW, shot
from tests.ui.team.conftest import Console, Desks
from tests.ui.team.test_team_console import open_conversation


def a_morning(url: str) -> None:
    """A customer's conversation: answers from two desks (replies come with `replied`)."""
    start = datetime.now(UTC) - timedelta(minutes=30)
    server = PostgresDatabase(url, upgrade=False)
    try:
        with server.transaction() as session:
            for minutes, text, operator in (
                (0, "Hi Zoë, your check-up at Glebe is due on 3 March. Reply YES to book.", "Alex"),
                (9, "Thanks Zoë, you're booked for 3 March at 10:00.", "Sam"),
            ):
                session.execute(
                    "INSERT INTO history(at, channel, recipients, text, ok, status, operator) "
                    "VALUES (?, 'SMS (REST)', ?, ?, 1, 'DELIVERED', ?)",
                    ((start + timedelta(minutes=minutes)).isoformat(), CUSTOMER, text, operator),
                )
    finally:
        server.close()


def replied(console: Console) -> None:
    """The customer's replies, as the receiver stores them."""
    start = datetime.now(UTC) - timedelta(minutes=30)
    store = console.session.store
    assert store is not None
    store.replies.add(
        [
            IncomingReply(CUSTOMER, "61400000000", text, start + timedelta(minutes=minutes))
            for minutes, text in (
                (4, "YES please, mornings are best"),
                (14, "Can I bring Leo too?"),
            )
        ]
    )


async def test_screenshot_a_conversation_three_desks_share(
    desks: Desks, sandbox: SandboxThread, pg_url: str, screenshots_dir: Path | None
) -> None:
    alex = await desks.open(sandbox, "Harbour Dental", "Alex", pg_url)
    sam = await desks.open(sandbox, "Harbour Dental", "Sam", pg_url)
    await desks.open(sandbox, "Harbour Dental", "Kim", pg_url)
    a_morning(pg_url)
    replied(alex)
    alex.window.resize(WINDOW)
    label = alex.window.status.team_label
    await wait_until(lambda: label.text().endswith("· 3 consoles"), 20, "three consoles")
    await wait_until(lambda: len(alex.reply_texts()) == 2, 20, "the replies listed")
    await open_conversation(alex)
    await open_conversation(sam)
    pane = alex.replies.conversation
    await wait_until(lambda: len(pane.entries) == 4, 20, "the transcript")
    sam.replies.conversation.editor.set_text("Of course, ")
    await wait_until(pane.typing_label.isVisible, 20, "Sam typing")
    await shot(alex.window, screenshots_dir, "team-conversation.png", WINDOW)


async def test_screenshot_a_console_whose_server_stopped(
    desks: Desks,
    sandbox: SandboxThread,
    lone_postgres: PostgresServer,
    screenshots_dir: Path | None,
) -> None:
    url = lone_postgres.dsn()
    alex = await desks.open(sandbox, "Harbour Dental", "Alex", url)
    alex.window.resize(WINDOW)
    lone_postgres.stop()
    label = alex.window.status.team_label
    await wait_until(lambda: "disconnected" in label.text(), 30, "said disconnected")
    await asyncio.sleep(0.2)
    await shot(alex.window, screenshots_dir, "team-disconnected.png", WINDOW)


NOTICE_SIZES = (QSize(1024, 700), QSize(1366, 768))
"""The small laptop screens the status bar's notice must fit (pictures at both)."""


async def test_screenshot_a_team_setting_notice_in_the_status_bar(
    desks: Desks,
    sandbox: SandboxThread,
    postgres: PostgresServer,
    pg_url: str,
    screenshots_dir: Path | None,
) -> None:
    office = office_logins(postgres, pg_url)
    alex = await desks.open(
        sandbox, "Harbour Dental", "Alex", office.login("Alex"), tabs=default_tabs()
    )
    sam = await desks.open(sandbox, "Harbour Dental", "Sam", office.login("Sam"))
    store = sam.session.store
    assert store is not None
    words = "STOP, HALT, QUIT, CANCEL, END, UNSUBSCRIBE, OPTOUT, REMOVE, STOPALL"
    rules = replace(read_rules(store.settings), opt_out=tuple(words.split(", ")))
    await asyncio.to_thread(save_rules, store.settings, rules)
    said = f"Sam changed the opt-out keywords: {words}"
    window, bar = alex.window, alex.window.status
    notice = bar.notice_label
    await wait_until(lambda: notice.text().startswith(said), 30, "the notice")
    await wait_until(lambda: bar.team_label.text().endswith("· 2 consoles"), 20, "two consoles")
    await wait_until(lambda: bar.balance_label.text().startswith("Credits"), 20, "the balance")

    for size in (*NOTICE_SIZES, window.minimumSize()):
        window.resize(size)
        name = f"team-notice-{size.width()}x{size.height()}.png"
        await shot(window, screenshots_dir if size in NOTICE_SIZES else None, name, size)
        # Every permanent item in view, the notice in what they leave (shortened, its
        # whole text in the tooltip).
        assert bar.geometry().right() < window.width()
        assert bar.listener.isVisible()
        assert bar.listener.geometry().right() <= bar.width()
        assert notice.isVisible()
        assert notice.geometry().right() <= bar.profile_label.geometry().left()
        shown = notice.shown_text()
        assert shown == notice.text() or shown.endswith("…")
        assert said in tooltip_shows(notice.toolTip())
